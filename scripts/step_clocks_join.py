#!/usr/bin/env python3
"""Join examples/step_time_ab.py's per-block records with an nvidia-smi log (scripts/gpu-step-clocks.sh).

usage: step_clocks_join.py STEP_AB_JSON CLOCKS_CSV
CLOCKS_CSV: nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,
clocks_throttle_reasons.active --format=csv,noheader,nounits (local time stamps, one GPU).
Prints one line per block in time order and, per attention, the median step of blocks whose
mean SM clock is at least 97% of the run's highest block mean (the unthrottled blocks).
"""
import datetime
import json
import statistics
import sys


def read_clocks(path):
    rows = []
    for line in open(path):
        f = [x.strip() for x in line.split(",")]
        if len(f) < 6:
            continue
        try:
            t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            rows.append((t, float(f[1]), float(f[2]), float(f[3]), float(f[4]), f[5]))
        except ValueError:
            continue
    return rows


def main(argv):
    d = json.load(open(argv[1]))
    clocks = read_clocks(argv[2])
    blocks = []
    for name, r in d["results"].items():
        n = d["steps_per_block"]
        for i, b in enumerate(r.get("blocks", [])):
            ms = r["step_ms"][i * n:(i + 1) * n]
            win = [c for c in clocks if b["t_start"] <= c[0] <= b["t_start"] + b["wall_s"]]
            blocks.append({"name": name, "t": b["t_start"], "med": statistics.median(ms),
                           "enq": b["enqueue_s"] / max(b["gpu_ms_sum"] / 1e3, 1e-9),
                           "sm": statistics.fmean(c[1] for c in win) if win else float("nan"),
                           "pw": statistics.fmean(c[3] for c in win) if win else float("nan"),
                           "thr": sorted({c[5] for c in win}), "n": len(win)})
    blocks.sort(key=lambda x: x["t"])
    print(f"{'attention':<14} {'step ms':>8} {'enqueue/gpu':>11} {'SM MHz':>7} {'W':>6} samples throttle")
    for b in blocks:
        print(f"{b['name']:<14} {b['med']:8.2f} {b['enq']:11.2f} {b['sm']:7.0f} {b['pw']:6.0f} {b['n']:7d} {','.join(b['thr'])}")
    top = max((b["sm"] for b in blocks if b["n"]), default=0)
    print(f"\nblocks at >= 97% of the highest block SM clock ({top:.0f} MHz):")
    for name in d["results"]:
        fast = [b["med"] for b in blocks if b["name"] == name and b["n"] and b["sm"] >= 0.97 * top]
        allb = [b["med"] for b in blocks if b["name"] == name]
        print(f"  {name:<14} {len(fast)}/{len(allb)} blocks, median step {statistics.median(fast) if fast else float('nan'):.2f} ms"
              f" (all blocks {statistics.median(allb):.2f})")


if __name__ == "__main__":
    main(sys.argv)
