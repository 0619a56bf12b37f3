#!/usr/bin/env python3
"""Summarise an ncu source-page CSV (scripts/profile-bwd.sh: bwd-<schedule>-sass.csv): warp-stall
samples by reason, by opcode, and the hottest SASS instructions with their dominant reasons.
usage: ncu_stalls.py FILE.csv [--top N] [--phases]
--phases: the per-step code of the busiest warps (the instructions executed most often: the MMA
warps' step loop) cut at its synchronisation points (mbarrier waits, warpgroup waits, named
barriers, the first HGMMA of each chain): samples, instructions per warp and step, and the main
stall reasons of each piece (docs/perf.md v6's phase table)."""
import csv, sys, collections

def load(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    hdr_i = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    hdr = rows[hdr_i]
    out = []
    for r in rows[hdr_i + 1:]:
        if len(r) != len(hdr):
            continue
        out.append(dict(zip(hdr, r)))
    return hdr, out

def num(s):
    try:
        return float(s.replace(",", ""))
    except (ValueError, AttributeError):
        return 0.0

def main():
    path = sys.argv[1]
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 30
    hdr, rows = load(path)
    reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(num(r["Warp Stall Sampling (All Samples)"]) for r in rows)
    print(f"{path}: {len(rows)} instructions, {total:.0f} samples")
    by_reason = collections.Counter()
    for r in rows:
        for k in reasons:
            by_reason[k] += num(r[k])
    print("\nby reason (% of samples):")
    for k, v in by_reason.most_common(12):
        print(f"  {k:24s} {100 * v / total:6.2f}")
    by_op = collections.Counter()
    for r in rows:
        op = r["Source"].split()[0] if r["Source"].split() else "?"
        if op.startswith("@"):
            op = r["Source"].split()[1]
        by_op[op.split(".")[0]] += num(r["Warp Stall Sampling (All Samples)"])
    print("\nby opcode (% of samples):")
    for k, v in by_op.most_common(15):
        print(f"  {k:12s} {100 * v / total:6.2f}")
    print(f"\nhottest {top} instructions:")
    rows.sort(key=lambda r: -num(r["Warp Stall Sampling (All Samples)"]))
    for r in rows[:top]:
        s = num(r["Warp Stall Sampling (All Samples)"])
        main_r = sorted(((num(r[k]), k[6:]) for k in reasons), reverse=True)[:3]
        why = " ".join(f"{n}:{100 * v / max(s, 1):.0f}%" for v, n in main_r if v > 0)
        print(f"  {r['Address']:>8s} {100 * s / total:5.2f}%  {r['Source'][:60]:60s} {why}")

def phases(path):
    hdr, rows = load(path)
    reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    samples = lambda r: num(r["Warp Stall Sampling (All Samples)"])
    total = sum(samples(r) for r in rows)
    # The step count of the hot loop: the most frequent execution count among HGMMA instructions.
    counts = collections.Counter(num(r["Instructions Executed"]) for r in rows if "HGMMA" in r["Source"])
    if not counts:
        print("no HGMMA in this kernel"); return
    per_step = counts.most_common(1)[0][0]
    # The step loop: first to last instruction executed exactly once per warp and step (retry
    # loops of mbarrier waits, executed more often, lie outside it in the SASS layout).
    hot = [i for i, r in enumerate(rows) if abs(num(r["Instructions Executed"]) - per_step) <= per_step * 0.01]
    lo, hi = hot[0], hot[-1] + 1
    marks = ("SYNCS.PHASECHK", "WARPGROUP.DEPBAR", "BAR.SYNC")
    pieces, start, last_acc = [], lo, None
    for i in range(lo, hi):
        src = rows[i]["Source"]
        acc = None
        if "HGMMA" in src:  # a chain starts where the accumulator register changes
            toks = src.replace(",", " ").split()
            acc = next((t for t in toks if t.startswith("R") and t[1:].isdigit()), None)
        new_chain = acc is not None and acc != last_acc
        if i > start and (any(m in src for m in marks) or new_chain):
            pieces.append((start, i)); start = i
        if acc is not None:
            last_acc = acc
    pieces.append((start, hi))
    loop = sum(samples(r) for r in rows[lo:hi])
    print(f"{path}: hot loop {rows[lo]['Address']}..{rows[hi - 1]['Address']}, {per_step:.0f} executions per "
          f"instruction, {100 * loop / total:.1f}% of all samples")
    print(f"  {'first instruction of the piece':52s} {'% loop':>7s} {'instr':>6s}  main stalls")
    for a, b in pieces:
        seg = rows[a:b]
        sm = sum(samples(r) for r in seg)
        ins = sum(num(r["Instructions Executed"]) for r in seg) / per_step
        c = collections.Counter()
        for r in seg:
            for k in reasons:
                c[k] += num(r[k])
        why = " ".join(f"{k[6:]}:{100 * v / max(sm, 1):.0f}" for k, v in c.most_common(3) if v > 0)
        print(f"  {seg[0]['Source'][:52]:52s} {100 * sm / max(loop, 1):6.1f}% {ins:6.1f}  {why}")


if __name__ == "__main__":
    if "--phases" in sys.argv:
        phases(sys.argv[1])
    else:
        main()
