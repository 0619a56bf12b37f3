#!/usr/bin/env python3
"""Median duration per kernel from an `ncu --metrics gpu__time_duration.sum --csv` capture.
  ncu_durations.py CAPTURE.csv LABEL
Prints one line per kernel (the last 70 characters of its name before the argument list):
LABEL, name, number of launches, median in microseconds."""
import csv
import statistics
import sys

SCALE = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    sys.exit(f"{sys.argv[1]}: no ncu rows")
hdr = rows[0]
k, v, u = hdr.index("Kernel Name"), hdr.index("Metric Value"), hdr.index("Metric Unit")
t = {}
for r in rows[1:]:
    t.setdefault(r[k].split("(")[0][-70:], []).append(float(r[v].replace(",", "")) * SCALE.get(r[u], float("nan")))
for name, xs in t.items():
    print(f"{sys.argv[2]} {name:70s} n {len(xs):3d} median {statistics.median(xs):9.1f} us")
