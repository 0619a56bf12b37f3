#!/usr/bin/env python3
"""Summarise the dQ chains of a DASH_BWD_TRACE timeline (PATH.chain.csv next to PATH, written by the trace
build's launcher; src/kernels/sm90/bwd_trace.cuh chain_put). One line per released link: the dQ tile's
semaphore index, the rank (the link's place in the tile's chain), when the writer had the MMA warps' partial
(staged), when it had acquired the predecessor's release (acquired) and when it released (released); ns.

Per link with a predecessor (rank >= 1):
  chain-bound   the partial was staged before the predecessor released (the writer waited on the chain);
  latency       released - max(staged, predecessor's release): what one link adds when the chain is the
                bound (acquire, bulk reduce, completion, release);
  reduce        released - acquired (the bulk reduce, its completion and the release).
The per-step budget of a chain in lockstep is one link latency per staging buffer's turn: with two
buffers a writer holds at most two staged partials, so chain-bound links longer than two steps slow the
MMA warps (docs/perf.md v35).

    python3 scripts/bwd_chain.py trace.csv.chain.csv [more ...]     (gzipped too)
"""
import statistics
import sys

from bwd_trace import q, read_int_csv  # (scripts/: the same CSV reader and quantile)


def load(path):
    head, rows = read_int_csv(path)
    links = {}
    for sem, rank, staged, acquired, released in rows:
        # staged / acquired are the low 32 bits of %globaltimer: rebuild them below released.
        staged = released - ((released - staged) & 0xFFFFFFFF)
        acquired = released - ((released - acquired) & 0xFFFFFFFF)
        links[(sem, rank)] = (staged, acquired, released)
    return head, links


def summarise(path):
    head, links = load(path)
    if not links:
        print(f"{path}: no links")
        return
    t0 = min(v[0] for v in links.values())
    bound, free, lat, red, wait = [], [], [], [], []
    for (sem, rank), (st, acq, rel) in links.items():
        red.append((rel - acq) / 1e3)
        prev = links.get((sem, rank - 1)) if rank > 0 else None
        if prev is None:
            continue
        wait.append(max(0, acq - st) / 1e3)
        if st < prev[2]:
            bound.append((sem, rank))
            lat.append((rel - prev[2]) / 1e3)
        else:
            free.append((sem, rank))
    n = len(bound) + len(free)
    # %globaltimer's granularity bounds a single link's reading (medians over many links are what to read)
    deltas = sorted({v[2] - v[1] for v in links.values() if v[2] > v[1]})
    print(f"{path}: {head}")
    print(f"  smallest positive release - acquire difference {deltas[0] if deltas else 0} ns (the timer's granularity at most)")
    print(f"  {len(links)} links, {n} with a predecessor; chain-bound {len(bound)} ({len(bound) / max(1, n):.3f})")
    if lat:
        print(f"  chain-bound link latency (us) median {statistics.median(lat):.2f} p10 {q(lat, .1):.2f} p90 {q(lat, .9):.2f}")
    print(f"  reduce + release (us) median {statistics.median(red):.2f} p90 {q(red, .9):.2f}; writer's wait on the chain"
          f" median {statistics.median(wait) if wait else 0:.2f} p90 {q(wait, .9):.2f}")
    # Over time: the chain-bound share and latency per tenth of the span.
    t1 = max(v[2] for v in links.values())
    bins = 10
    span = max(1, t1 - t0)
    rows = [[0, 0, []] for _ in range(bins)]
    for (sem, rank), (st, acq, rel) in links.items():
        if rank == 0 or (sem, rank - 1) not in links:
            continue
        b = min(bins - 1, (rel - t0) * bins // span)
        prev = links[(sem, rank - 1)]
        rows[b][1] += 1
        if st < prev[2]:
            rows[b][0] += 1
            rows[b][2].append((rel - prev[2]) / 1e3)
    print(f"  per tenth of the span ({span / 1e3:.0f} us): chain-bound share / median latency (us)")
    print("   " + "  ".join(f"{r[0] / max(1, r[1]):.2f}/{statistics.median(r[2]) if r[2] else 0:.2f}" for r in rows))


if __name__ == "__main__":
    for p in sys.argv[1:]:
        summarise(p)
