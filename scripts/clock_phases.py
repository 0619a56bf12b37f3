#!/usr/bin/env python3
"""The SM clock and power per phase of a device script: clock_phases.py CLOCKS MARKS.
CLOCKS: `nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms N`;
MARKS: lines "EPOCH_SECONDS NAME", one per phase start (the last one ends the previous phase).
Prints, per phase, the samples' count and the median / p10 / p90 of the SM clock (MHz) and power (W),
over the samples with the clock above idle (> 1000 MHz: the GPU busy)."""
import datetime
import statistics
import sys


def parse_clocks(path):
    """(epoch seconds, SM MHz, W) per sample. The time stamps are local time, parsed as
    scripts/step_clocks_join.py's read_clocks does (that one reads gpu-step-clocks.sh's six
    unit-less columns; this, the four columns with units above)."""
    rows = []
    for line in open(path):
        f = [x.strip() for x in line.split(",")]
        if len(f) < 3:
            continue
        try:
            t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            rows.append((t, float(f[1].split()[0]), float(f[2].split()[0])))
        except ValueError:
            continue
    return rows


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def main():
    rows = parse_clocks(sys.argv[1])
    marks = [(float(a), b) for a, b in (line.split(None, 1) for line in open(sys.argv[2]) if line.strip())]
    print(f"{'phase':<10} {'busy/all':>9} {'MHz med':>8} {'p10':>6} {'p90':>6} {'W med':>6} {'p10':>6} {'p90':>6}")
    for (t0, name), (t1, _) in zip(marks, marks[1:]):
        sel = [r for r in rows if t0 <= r[0] < t1]
        busy = [r for r in sel if r[1] > 1000]
        if not busy:
            print(f"{name.strip():<10} {0:>4}/{len(sel):<4}")
            continue
        mhz = [r[1] for r in busy]
        w = [r[2] for r in busy]
        print(f"{name.strip():<10} {len(busy):>4}/{len(sel):<4} {statistics.median(mhz):8.0f} {pct(mhz, .1):6.0f} "
              f"{pct(mhz, .9):6.0f} {statistics.median(w):6.0f} {pct(w, .1):6.0f} {pct(w, .9):6.0f}")


if __name__ == "__main__":
    main()
