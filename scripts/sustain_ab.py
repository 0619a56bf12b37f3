#!/usr/bin/env python3
"""`dash-attn bench --sustain` A/B table: sustain_ab.py BASE.json OTHER.json [...] prints, per row (hdim,
mask, seqlen, schedule) of BASE, each file's sustained TFLOP/s, W, MHz and TFLOP/J, and each other file's
TFLOP/s and TFLOP/J over BASE's (docs/perf.md v39 item 5). Rows missing from a file are skipped."""
import json
import sys


def load(path):
    rows = {}
    for r in json.load(open(path)):
        if r.get("sustain_calls", 0) > 0:
            rows[(r["hdim"], "causal" if r["causal"] else "full", r["seqlen"], r["schedule"])] = r
    return rows


def fmt(x, nd):
    return "-" if x is None else f"{x:.{nd}f}"


def main(paths):
    if len(paths) < 1:
        sys.exit(__doc__)
    tabs = [load(p) for p in paths]
    names = [p.rsplit("/", 1)[-1].removesuffix(".json") for p in paths]
    print("row | " + " | ".join(f"{n}: TFLOP/s W MHz TFLOP/J" for n in names) + " | " +
          " | ".join(f"{n}/{names[0]} speed, per J" for n in names[1:]))
    for key, b in sorted(tabs[0].items()):
        cells = []
        for t in tabs:
            r = t.get(key)
            cells.append("-" if r is None else " ".join((fmt(r.get("sustain_tflops"), 1), fmt(r.get("sustain_watts"), 0),
                                                          fmt(r.get("sustain_mhz"), 0), fmt(r.get("sustain_tflop_per_j"), 4))))
        ratios = []
        for t in tabs[1:]:
            r = t.get(key)
            if r is None or not b.get("sustain_tflops"):
                ratios.append("-")
                continue
            sp = r["sustain_tflops"] / b["sustain_tflops"]
            pj = (r["sustain_tflop_per_j"] / b["sustain_tflop_per_j"]) if r.get("sustain_tflop_per_j") and b.get("sustain_tflop_per_j") else None
            ratios.append(f"{sp:.3f} {fmt(pj, 3)}")
        print(f"{key[0]} {key[1]} {key[2]} {key[3]} | " + " | ".join(cells) + " | " + " | ".join(ratios))


if __name__ == "__main__":
    main(sys.argv[1:])
