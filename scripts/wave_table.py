#!/usr/bin/env python3
"""The last-wave table of gpu-next55.sh: per (hdim, seqlen, schedule) and batch x heads, the work
units (forward 128-row Q tiles = backward 128-key KV tasks), the waves on 132 SMs, and the forward
and backward TFLOP/s (best of the rounds) relative to the largest batch x heads of the group.
  wave_table.py FILE.json...  (files named d{hdim}-s{seqlen}-b{b}-h{h}-r{round}.json)"""
import json
import re
import sys

SMS = 132
rows = {}
for f in sys.argv[1:]:
    m = re.search(r"d(\d+)-s(\d+)-b(\d+)-h(\d+)-r(\d+)\.json$", f)
    if not m:
        continue
    hdim, s, b, h, _ = map(int, m.groups())
    for e in json.load(open(f)):
        key = (hdim, s, e["schedule"])
        best = rows.setdefault(key, {}).setdefault(b * h, [0.0, 0.0, e["ran"]])
        best[0] = max(best[0], e["fwd_tflops"])
        best[1] = max(best[1], e["bwd_tflops"])
for (hdim, s, sched), by_bh in sorted(rows.items()):
    ref = by_bh[max(by_bh)]
    print(f"hdim {hdim} full seqlen {s} {sched}: batch x heads, units, waves, fwd TF/s (/ last), bwd TF/s (/ last), ran")
    for bh in sorted(by_bh):
        fw, bw, ran = by_bh[bh]
        units = bh * s // 128
        print(f"  {bh:4} {units:6} {units / SMS:6.2f}  {fw:6.1f} ({fw / ref[0]:.3f})  {bw:6.1f} ({bw / ref[1]:.3f})  {ran}")
