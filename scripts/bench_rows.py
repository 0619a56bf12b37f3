#!/usr/bin/env python3
"""One line per row of `dash-attn bench --json` files: shape, schedule, what ran, time, TFLOP/s,
det / atomic and the kernel that ran (block_m, producer_regs, head_block, split_rank where present).
  bench_rows.py FILE.json... [--min-seqlen N]"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("files", nargs="+")
ap.add_argument("--min-seqlen", type=int, default=0)
a = ap.parse_args()
for f in a.files:
    for e in json.load(open(f)):
        if e["seqlen"] < a.min_seqlen:
            continue
        extra = "".join(f" {k} {e[k]}" for k in ("head_block", "split_rank", "writer_rank") if k in e)
        print(f"hdim {e['hdim']:3} {'causal' if e['causal'] else 'full':6} {e['seqlen']:6} {e['schedule']:15} "
              f"ran {e['ran']:15} {e['bwd_ms']:8.3f} ms {e['bwd_tflops']:6.1f} TF/s det/atomic "
              f"{e['det_over_atomic']:.3f} bm {e['block_m']} regs {e['producer_regs']}{extra}")
