#!/usr/bin/env python3
"""Summarise an ncu source-page CSV (scripts/profile-bwd.sh: bwd-<schedule>-sass.csv): warp-stall
samples by reason, by opcode, and the hottest SASS instructions with their dominant reasons.
usage: ncu_stalls.py FILE.csv [--top N]"""
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

if __name__ == "__main__":
    main()
