#!/usr/bin/env python3
"""The README's peers table and the issue-4 ratio ranges from bench/peers.py JSON files.
  peers_table.py PEERS.json [MORE.json ...] [--points 128:full:2048,...]   (default: the README's 11 points)
A point missing from the first file is taken from the next file that has it (a run cut by its
budget completed by an earlier one); the table then names the file of each such point.
Prints the markdown table (backward TFLOP/s; best deterministic = the best explicit deterministic
schedule), then per (hdim, mask) the ranges of best det / cuDNN, / Flex, / atomic, the count of
points where `auto` is within 3% of the best (by auto's own row, and by the explicit row of the
schedule it ran), and forward / cuDNN per seqlen; then shift,
symmetric shift, descending and atomic TFLOP/s per point."""
import argparse
import gzip
import json

README_POINTS = ("128:full:2048,128:full:8192,128:full:16384,128:causal:2048,128:causal:8192,128:causal:16384,"
                 "64:full:1024,64:full:4096,64:full:16384,64:causal:1024,64:causal:16384")
ap = argparse.ArgumentParser()
ap.add_argument("peers", nargs="+")
ap.add_argument("--points", default=README_POINTS)
a = ap.parse_args()
by, src = {}, {}
for i, path in enumerate(a.peers):
    for r in json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))["results"]:
        key = (r["hdim"], r["mask"], r["seqlen"])
        if key not in by:
            by[key], src[key] = r, i


def tf(r, impl):
    v = r["impls"].get(impl, {})
    return v.get("bwd_tflops")


def k(s):
    return f"{s // 1024}k" if s >= 1024 else str(s)


print("| hdim | mask | seqlen | cuDNN (non-det.) | FlexAttention | FA2 (non-det.) | dash atomic (non-det.) | "
      "dash best deterministic | / cuDNN | / Flex | / atomic |")
print("|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|")
for p in a.points.split(","):
    h, m, s = p.split(":")
    if (int(h), m, int(s)) not in by:  # a run of some head dims / masks only
        continue
    r = by[(int(h), m, int(s))]
    q = r["ratios"]
    mark = "*" * src[(int(h), m, int(s))]
    print(f"| {h} | {m} | {k(int(s))}{mark} | {tf(r, 'cudnn'):.0f} | {tf(r, 'flex'):.0f} | {tf(r, 'flash'):.0f} | "
          f"{tf(r, 'dash:atomic'):.0f} | {q['best_det_schedule']} {q['best_det_bwd_tflops']:.0f} | "
          f"{q['best_det_vs_cudnn_bwd']:.2f} | {q['best_det_vs_flex_bwd']:.2f} | {q['best_det_vs_atomic']:.2f} |"
          )
for i, path in enumerate(a.peers[1:], 1):
    print(f"\n{'*' * i}: from {path}")
for h in (128, 64):
    for m in ("full", "causal"):
        rs = [by[(h, m, s)] for s in sorted(s for (hh, mm, s) in by if hh == h and mm == m)]
        if not rs:  # a run of some head dims / masks only (peers.py --hdims / --masks)
            continue
        def rng(key):
            v = [r["ratios"][key] for r in rs]
            return f"{min(v):.3f}-{max(v):.3f}"
        auto = sum(r["ratios"]["auto_vs_best"] >= 0.97 for r in rs)
        # The schedule auto ran, by that schedule's own explicit row (the same kernel as auto's row,
        # timed in other turns): separates the pick from the spread between two rows of one kernel.
        picked = sum(tf(r, "dash:" + r["ratios"]["auto_ran"]) >= 0.97 * r["ratios"]["best_det_bwd_tflops"] for r in rs)
        fwd = [round(r["ratios"]["fwd_vs_cudnn_fwd"], 3) for r in rs]
        # peers.py's forward-only phase since the twenty-fifth session; the in-round ratio beside it
        fwd_rnd = [round(r["ratios"].get("fwd_vs_cudnn_fwd_in_rounds", r["ratios"]["fwd_vs_cudnn_fwd"]), 3) for r in rs]
        # peers.py's paired phase (--fwd-pairs, twenty-sixth session): neighbouring forwards, median of ratios
        paired = [None if r["ratios"].get("fwd_vs_cudnn_fwd_paired") is None else round(r["ratios"]["fwd_vs_cudnn_fwd_paired"], 3)
                  for r in rs]
        print(f"hdim {h} {m}: /cudnn {rng('best_det_vs_cudnn_bwd')} /flex {rng('best_det_vs_flex_bwd')} "
              f"/atomic {rng('best_det_vs_atomic')} auto>=0.97 {auto}/{len(rs)} (its schedule's row: {picked}/{len(rs)}) "
              f"shift/asc {rng('shift_vs_ascending')} best/max(asc,spt) {rng('best_vs_max_ascending_spt')} fwd/cudnn {fwd} "
              f"(in the rounds {fwd_rnd})" + (f" (paired {paired})" if any(x is not None for x in paired) else ""))
for (h, m, s), r in sorted(by.items(), key=lambda x: (-x[0][0], x[0][1], x[0][2])):
    print(f"{h} {m} {s} shift {tf(r, 'dash:shift'):.0f} sym {tf(r, 'dash:symmetric_shift'):.0f} "
          f"desc {tf(r, 'dash:descending'):.0f} atomic {tf(r, 'dash:atomic'):.0f} auto ran {r['ratios']['auto_ran']}")
