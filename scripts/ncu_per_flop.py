#!/usr/bin/env python3
"""ncu --csv metric files (one kernel each) normalised per backward TFLOP, and ours against cuDNN's per shape
(scripts/gpu-next111.sh). File names: ncu-dash-cC-sS-SCHEDULE.csv, ncu-cudnn-cC-sS.csv; hdim 128, 16k tokens,
hidden 2048 (the standard sweep), FlashAttention's FLOP convention (backward = 2.5 x forward, causal half).
  python3 scripts/ncu_per_flop.py DIR/ncu-*.csv"""
import csv
import os
import re
import sys

HDIM, TOKENS, HIDDEN = 128, 16384, 2048
SUMS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "smsp__inst_executed.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum",
        "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum")


def bwd_tflop(causal, seqlen):
    batch, heads = TOKENS // seqlen, HIDDEN // HDIM
    fwd = 4.0 * batch * heads * seqlen * seqlen * HDIM * (0.5 if causal else 1.0)
    return 2.5 * fwd / 1e12


def load(path):
    """{metric: float} of the last kernel in the file (the one profiled launch), or {} if none."""
    vals = {}
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) >= 15 and r[0] != "ID" and r[0].isdigit()]
    if not rows:
        return vals
    last = rows[-1][0]
    for r in rows:
        if r[0] != last:
            continue
        try:
            vals[r[-3]] = float(r[-1].replace(",", ""))
        except ValueError:
            pass
    return vals


def main(paths):
    table = {}
    for p in paths:
        m = re.match(r"ncu-(dash|cudnn)-c(\d)-s(\d+)(?:-(\w+))?\.csv$", os.path.basename(p))
        if not m:
            continue
        impl, causal, seqlen, sched = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4) or "bprop"
        v = load(p)
        if not v:
            print(f"{os.path.basename(p)}: no metrics (see the file)")
            continue
        table[(causal, seqlen, impl, sched)] = v
    for (causal, seqlen) in sorted({k[:2] for k in table}, reverse=True):
        tf = bwd_tflop(causal, seqlen)
        rows = {k[2:]: v for k, v in table.items() if k[:2] == (causal, seqlen)}
        print(f"== hdim {HDIM} {'causal' if causal else 'full'} {seqlen}: per backward TFLOP ({tf:.3f} TFLOP), main kernel only")
        names = sorted({n for v in rows.values() for n in v})
        cols = sorted(rows, key=lambda k: (k[0] != "cudnn", k[1]))
        print("| metric | " + " | ".join(f"{i} {s}" for i, s in cols) + " | " +
              " | ".join(f"{s} / cuDNN" for i, s in cols if i == "dash") + " |")
        print("|---|" + "---:|" * (len(cols) + sum(i == "dash" for i, _ in cols)))
        ref = rows.get(("cudnn", "bprop"), {})
        for n in names:
            per = lambda v: v.get(n, float("nan")) / (tf if n in SUMS else 1.0)
            cells = [per(rows[c]) for c in cols]
            ratios = [per(rows[c]) / per(ref) if ref and per(ref) else float("nan") for c in cols if c[0] == "dash"]
            unit = " / TFLOP" if n in SUMS else ""
            print(f"| {n}{unit} | " + " | ".join(f"{x:.4g}" for x in cells) + " | " +
                  " | ".join(f"{x:.3f}" for x in ratios) + " |")
        for c in cols:
            t = rows[c].get("gpu__time_duration.sum")
            if t:
                print(f"  {c[0]} {c[1]}: {tf / (t * 1e-9):.0f} TFLOP/s at "
                      f"{rows[c].get('sm__cycles_elapsed.avg.per_second', float('nan')) / 1e6:.0f} MHz (main kernel)")


if __name__ == "__main__":
    main(sys.argv[1:])
