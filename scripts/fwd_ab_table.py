#!/usr/bin/env python3
"""Forward A/B table from `dash-attn bench --json` files DIR/fwd-BIN-rR.json (gpu_common's fwd_ab):
forward TFLOP/s per binary by the fastest of the rounds, each binary's speed over the first one's,
and whether its fwd_hash (O and LSE bits) equals the first one's at every point (grad_hash, which
the forward's bits also decide, where a binary's bench predates fwd_hash).

  python3 scripts/fwd_ab_table.py DIR old,new [ROUNDS]
"""
import json
import sys


def main(argv):
    d, bins = argv[1], argv[2].split(",")
    rounds = int(argv[3]) if len(argv) > 3 else 3
    t = {}
    for b in bins:
        for r in range(1, rounds + 1):
            try:
                rows = json.load(open(f"{d}/fwd-{b}-r{r}.json"))
            except (OSError, ValueError) as e:
                print("missing", b, r, e)
                continue
            for row in rows:
                key = (row["hdim"], row["causal"], row["seqlen"])
                t.setdefault(key, {}).setdefault(b, []).append(row)
    hash_key = "fwd_hash" if all(r.get("fwd_hash") for v in t.values() for rs in v.values() for r in rs) else "grad_hash"
    t = {k: {b: [(r["fwd_ms"], r["fwd_tflops"], r[hash_key]) for r in rs] for b, rs in v.items()} for k, v in t.items()}
    base = bins[0]
    print(f"forward TFLOP/s, min time of {rounds} rounds: {' / '.join(bins)}; speed over {base}; "
          f"{hash_key} against {base}")
    for key in sorted(t, key=lambda k: (k[0], k[1], k[2])):
        v = t[key]
        if any(b not in v for b in bins):
            continue
        best = {b: min(v[b]) for b in bins}
        cells = " / ".join(f"{best[b][1]:6.1f}" for b in bins)
        ratios = "  ".join(f"{b} {best[base][0] / best[b][0]:.3f}" for b in bins[1:])
        bits = "  ".join(f"{b} {'same bits' if {x[2] for x in v[b]} == {x[2] for x in v[base]} else 'BITS DIFFER'}"
                         for b in bins[1:])
        hd, causal, s = key
        print(f"hdim {hd:3d} {'causal' if causal else 'full  '} {s:6d}  {cells}   {ratios}   {bits}")


if __name__ == "__main__":
    main(sys.argv)
