#!/usr/bin/env python3
"""Summarise a DASH_BWD_TRACE timeline (src/kernels/sm90/bwd_trace.cuh): per side, the wait for its K / V
(t1 - t0), its step loop (t3 - t1, per step), the dK / dV epilogue (t4 - t3) and the gap to the CTA's next
side (next t0 - t4); per CTA, its first start and last end against the kernel's span (the tail).

    python3 scripts/bwd_trace.py trace.csv [more.csv.gz ...]      (gzipped traces too: docs/data keeps them so)
"""
import gzip
import statistics
import sys


def read_int_csv(path):
    """The trace launcher's CSVs (gzipped too): the '# ...' line's text and every data row as ints (the column
    header skipped)."""
    head, rows = "", []
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            if line.startswith("#"):
                head = line[1:].strip()
            elif line[:1].isdigit():
                rows.append([int(x) for x in line.split(",")])
    return head, rows


def load(path):
    head, rows = read_int_csv(path)
    return head, [dict(cta=v[0], side=v[1], t0=v[2], t1=v[3], t3=v[5], t4=v[6], j=v[7], steps=v[8], head=v[9])
                  for v in rows]


def q(xs, f):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(f * len(xs)))] if xs else float("nan")


def summarise(path):
    head, rows = load(path)
    rows = [r for r in rows if r["t4"] > 0]
    if not rows:
        print(f"{path}: no complete sides")
        return
    t_begin = min(r["t0"] for r in rows)
    t_end = max(r["t4"] for r in rows)
    span = (t_end - t_begin) / 1e3
    by_cta = {}
    for r in rows:
        by_cta.setdefault(r["cta"], []).append(r)
    kv, step, epi, gap, loop = [], [], [], [], []
    for cs in by_cta.values():
        cs.sort(key=lambda r: r["side"])
        for a, b in zip(cs, cs[1:] + [None]):
            kv.append((a["t1"] - a["t0"]) / 1e3)
            epi.append((a["t4"] - a["t3"]) / 1e3)
            loop.append((a["t3"] - a["t1"]) / 1e3)
            if a["steps"] > 0:
                step.append((a["t3"] - a["t1"]) / 1e3 / a["steps"])
            if b is not None:
                gap.append((b["t0"] - a["t4"]) / 1e3)
    starts = [min(r["t0"] for r in cs) for cs in by_cta.values()]
    ends = [max(r["t4"] for r in cs) for cs in by_cta.values()]
    busy = sum(e - s for s, e in zip(starts, ends)) / 1e3
    steps = [r["steps"] for r in rows]
    print(f"{path}: {head}")
    print(f"  {len(rows)} sides on {len(by_cta)} CTAs, kernel span {span:.1f} us (first side top to last epilogue),"
          f" steps per side median {statistics.median(steps)}")
    sides = len(rows)
    tot_kv, tot_epi, tot_gap, tot_loop = sum(kv), sum(epi), sum(gap), sum(loop)
    tot = tot_kv + tot_epi + tot_gap + tot_loop
    print(f"  per side (median / p90, us): K/V wait {statistics.median(kv):.2f} / {q(kv, .9):.2f}, step loop "
          f"{statistics.median(loop):.2f}, per step {statistics.median(step):.3f} / {q(step, .9):.3f}, epilogue "
          f"{statistics.median(epi):.2f} / {q(epi, .9):.2f}, gap to next side {statistics.median(gap) if gap else 0:.2f}")
    print(f"  share of the CTAs' time: step loops {tot_loop / tot:.3f}, K/V waits {tot_kv / tot:.3f}, epilogues "
          f"{tot_epi / tot:.3f}, gaps {tot_gap / tot:.3f}; per side outside the loop {(tot - tot_loop) / sides:.2f} us")
    print(f"  CTA start spread {(max(starts) - min(starts)) / 1e3:.2f} us; end spread {(max(ends) - min(ends)) / 1e3:.1f} us"
          f" (median CTA ends {(t_end - statistics.median(ends)) / 1e3:.1f} us before the last); busy / (CTAs x span) "
          f"{busy / (len(by_cta) * span):.3f}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        summarise(p)
