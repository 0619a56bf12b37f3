#!/usr/bin/env python3
"""`dash-attn bench --sustain` A/B table (docs/perf.md v39 item 5, v40):
  sustain_ab.py BASE OTHER [...]
Each argument is one JSON file of `dash-attn bench --json` or a comma-separated list of them (the rounds of
one configuration, e.g. sus-def-r1.json,sus-def-r2.json; give every configuration the same number of
rounds, in the same order, so that round i of each was interleaved with round i of the others).
Prints, per row (hdim, mask, seqlen, schedule) of BASE's first round: each configuration's sustained
TFLOP/s, W, MHz and TFLOP/J (means over its rounds), and for each other configuration its ratios over
BASE: speed (TFLOP/s), per cycle (TFLOP/s over the median SM clock) and per joule, each the mean of the
per-round ratios (round i against BASE's round i; with unequal round counts, the ratio of the means).
Rows missing from a round are left out of that round's numbers; "-" where none is left."""
import json
import sys

FIELDS = ("sustain_tflops", "sustain_watts", "sustain_mhz", "sustain_tflop_per_j")


def load(path):
    rows = {}
    for r in json.load(open(path)):
        if r.get("sustain_calls", 0) > 0:
            rows[(r["hdim"], "causal" if r["causal"] else "full", r["seqlen"], r["schedule"])] = r
    return rows


def fmt(x, nd):
    return "-" if x is None else f"{x:.{nd}f}"


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def metrics(r):
    """(speed, per cycle, per joule) of one row; None where a field is missing or not positive."""
    if r is None:
        return (None, None, None)
    tf, mhz, pj = (r.get(k) for k in ("sustain_tflops", "sustain_mhz", "sustain_tflop_per_j"))
    ok = lambda x: x is not None and x > 0
    return (tf if ok(tf) else None, tf / mhz if ok(tf) and ok(mhz) else None, pj if ok(pj) else None)


def ratio(a, b):
    return a / b if a is not None and b is not None else None


def main(args):
    if len(args) < 1:
        sys.exit(__doc__)
    configs = [[load(p) for p in arg.split(",")] for arg in args]
    names = [arg.split(",")[0].rsplit("/", 1)[-1].removesuffix(".json") + (f" (x{len(arg.split(','))})" if "," in arg else "")
             for arg in args]
    print("row | " + " | ".join(f"{n}: TFLOP/s W MHz TFLOP/J" for n in names) + " | " +
          " | ".join(f"{n} / {names[0]}: speed, per cycle, per J" for n in names[1:]))
    base = configs[0]
    for key in sorted(base[0]):
        cells = []
        for rounds in configs:
            vals = [mean(rd[key].get(f) for rd in rounds if key in rd) for f in FIELDS]
            cells.append(" ".join(fmt(v, nd) for v, nd in zip(vals, (1, 0, 0, 4))))
        ratios = []
        for rounds in configs[1:]:
            if len(rounds) == len(base):
                per_round = [[ratio(o, b) for o, b in zip(metrics(rd.get(key)), metrics(br.get(key)))]
                             for rd, br in zip(rounds, base)]
                rs = [mean(col) for col in zip(*per_round)]
            else:
                mo = [mean(col) for col in zip(*(metrics(rd.get(key)) for rd in rounds))]
                mb = [mean(col) for col in zip(*(metrics(br.get(key)) for br in base))]
                rs = [ratio(o, b) for o, b in zip(mo, mb)]
            ratios.append(" ".join(fmt(x, 3) for x in rs))
        print(f"{key[0]} {key[1]} {key[2]} {key[3]} | " + " | ".join(cells) + " | " + " | ".join(ratios))


if __name__ == "__main__":
    main(sys.argv[1:])
