#!/usr/bin/env python3
"""Scores (and refits) the planner's sm90 cost set (kSm90Params, src/schedule/cost_model.h)
against H200 measurements of the sm90 backward, through the planner's own command line
(`dash-attn plan --json`, with `--param NAME=VALUE` for candidate sets). No GPU needed.

Data (the standard sweep: 16k tokens, hidden 2048, MHA, bf16, full/causal x seqlen 512..16384,
hdim 128 with 16 heads and hdim 64 with 32 heads, the default task order and kernel path), one
of the sets of DATA below, chosen with --data; three of them described here:
--data 9dd59e9 (the default): take-ahead 1 by default (9dd59e9), the current kernel when it was added
  peers  bench/peers.py in one process (median of 8; its log: bench-python.txt next to it):
           docs/data/peers-h200-9dd59e9/peers/peers.json.gz
         ascending, spt, descending, atomic (no shift / symmetric_shift in this run);
         descending is the mean of the dash:descending and dash:auto rows (auto ran descending
         at all 24 points). Its bwd at 8k/16k carries ~+-6% noise (dash:descending and dash:auto
         differ by up to 12%, hdim 128 causal 16k: docs/perf.md v9 item 4).
  bench  `dash-attn bench` JSON, all six schedules + auto (one run, median of 7):
           docs/data/peers-h200-9dd59e9/bench-hdim{128,64}.json
         descending is the mean of the descending and auto rows (auto ran descending everywhere).
  Combined as below, the same rule as for 250529d (--notes): the point's peers / bench scale is
  0.99-1.01 up to 4k except hdim 128 full 4k (1.04), 1.05-1.10 at hdim 128 8k/16k and 1.00-1.01
  at hdim 64 8k/16k; after it the sources agree per schedule within +-2% up to 4k (hdim 128 full
  4k: +-3.2%) and within +-5% at 8k/16k. One peers row is dropped: hdim 128 causal 16k dash:auto
  4.788 ms (dash:descending 5.344, scaled bench 5.330), the 12% outlier of perf.md. Combining
  halves the weight of peers' noisy 8k/16k rows rather than trusting one run of either; shift and
  symmetric_shift come from bench alone (scaled to peers). --source bench scores bench alone.
--data 250529d: the dual-dQ-writer kernel (250529d / b254d6c), the data kSm90Params was fitted on
  until the e29ccbd refit
  peers  bench/peers.py, every schedule in one process per point, `bwd` = the time from after
         the forward's launches to the end of the backward (median of 8):
           docs/data/peers-h200-250529d/bench-python.txt   (log; hdim 128 all, hdim 64 causal)
           docs/data/peers-h200-3505b4f-hdim64full/peers.json (hdim 64 full)
         descending is the mean of the dash:descending and dash:auto rows where auto ran
         descending (two measurements of the same kernel in one process).
  bench  `dash-attn bench` JSON, descending/spt/shift/atomic (the backward alone, median):
           docs/data/writer-h200-b254d6c/next-dual-hdim{128,64}.json (DASH_BWD_DUAL_WRITER=1,
           the default since 250529d)
--data b016d55: the gpu-next36.sh run (b016d55: e29ccbd's kernels with the 16-byte preprocess), the
  same sources and rule as e29ccbd (docs/data/next36-h200-b016d55/{peers/peers.json,
  suite/bench-hdim{128,64}.json}); a check of the e29ccbd refit, not fitted on: auto 24/24, pairs
  > 3% apart in order 143/156.
--data e29ccbd: the gpu-next35.sh run (e29ccbd: the kernels of ef0214e with programmatic dependent
  launch and the polling postprocess on by default), the data kSm90Params is fitted on since the
  twenty-second session (the postprocess term: CostParams::post_gbytes_per_s, post_poll)
  peers  bench/peers.py in one process (3 rounds; its log: peers-run.log / run.log next to it):
           docs/data/next35-h200-e29ccbd/peers/peers.json.gz
         every schedule; descending is the mean of the dash:descending row and the dash:auto row
         where auto ran descending (hdim 128 causal 2k-16k and full 512-8k, hdim 64 causal 2k-16k
         and full 512-8k).
  bench  `dash-attn bench` JSON, all six schedules + auto (the same kernel build):
           docs/data/next35-h200-e29ccbd/suite/bench-hdim{128,64}.json
         an auto row counts for the schedule it ran.
  Combined as for 9dd59e9 (--notes): the point's peers / bench scale is 0.97-1.03 up to 2k, 0.99-1.08
  at 4k and 1.01-1.13 at 8k/16k; after it the sources agree per schedule within +-3% up to 4k
  (except hdim 128 causal 4k shift +4.2%, full 4k ascending -3.0%) and within +-5% at 8k/16k
  (except hdim 64 full 16k ascending -6.8% and descending -5.7%). One peers row is dropped: hdim
  128 full 16384 atomic 10.778 ms (bench 8.743 x 1.097, 12% off; the same row was dropped at
  ef0214e). The older data sets are scored with post_poll=0 (their kernels ran the postprocess
  after the main kernel; POLL_DATA, data_params), as the C++ Calibration tests do.
The fitted table ("combined") is per point and schedule: the geometric mean of peers and
bench where both measured it, bench first scaled by the point's median peers/bench ratio over
the schedules both have (so that schedules of one source only compare on one scale: ascending
and symmetric_shift at 250529d, shift and symmetric_shift at 9dd59e9), peers rows more than
OUTLIER off the scaled bench time dropped; one source alone otherwise.
Times are rounded to 0.1 us, as in the C++ table (--cpp-table) that the CPU test scores.

Scores (as Calibration.* in tests/cpu/test_async_reduce.cpp):
  auto within 3%   the measured time of the planner's pick is within 3% of the measured best
                   deterministic schedule (symmetric_shift compared on causal masks only)
  pairs in order   pairs of deterministic schedules more than 3% apart on the GPU that the
                   model orders the same way (a model tie counts as a miss); also over all pairs
  atomic error     mean |predicted / measured - 1| of atomic
  rms log ratio    rms of log((pred / pred atomic) / (meas / meas atomic))

usage:
  scripts/fit_planner.py                         score kSm90Params (the binary's built-in set)
  scripts/fit_planner.py --data e29ccbd ...      the same on the data kSm90Params is fitted on
  scripts/fit_planner.py --param reduce_latency_us=0.5 ...   score a modified set
  scripts/fit_planner.py --source peers|bench    score one source alone
  scripts/fit_planner.py --fit                   grid search (compute, then reduce + penalty)
  scripts/fit_planner.py --markdown --before per_sm_tflops=5.2,...   tables for docs/schedules.md
  scripts/fit_planner.py --notes                 cross-checks of the sources, dropped rows
  scripts/fit_planner.py --cpp-table             the table as a C++ initializer (kMeasuredSm90Ahead1
                                                 for 9dd59e9, kMeasuredSm90Dual for 250529d,
                                                 kMeasuredSm90PeersE29ccbd for e29ccbd,
                                                 kMeasuredSm90PeersB016d55 for b016d55)
  scripts/fit_planner.py --data e29ccbd --fit --param post_gbytes_per_s=2000 \
      --param reduce_latency_us=0.25 --param reduce_gbytes_per_s=16
                                                 the fit behind the current kSm90Params: compute at the
                                                 postprocess rate of the ncu durations (from the reduce
                                                 of the set before), then the rest with the rate on the
                                                 grid (docs/schedules.md, "The postprocess in the model")
The binary: build-helper/dash-attn by default (--cli), a CPU-only build is enough:
  cmake -S . -B build-helper -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_BUILD_CUDA=OFF
  cmake --build build-helper
--fit takes about 4 minutes on 2 cores (80 compute candidates of 24 atomic-only runs, then 96
candidates of 24 `dash-attn plan` runs).
"""
import argparse
import concurrent.futures as cf
import gzip
import itertools
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEDULES = ["ascending", "spt", "descending", "shift", "symmetric_shift", "atomic"]
DET = SCHEDULES[:-1]
# The data sets (--data): the peers files (a bench/peers.py log and/or peers.json files, merged
# per point in this order, a later file replacing an earlier one's point) and the bench files.
DATA = {
    # The dual-writer kernel (250529d / b254d6c): the data kSm90Params was fitted on until e29ccbd.
    "250529d": dict(peers_log="docs/data/peers-h200-250529d/bench-python.txt",
                    peers_json=["docs/data/peers-h200-3505b4f-hdim64full/peers.json"],
                    bench=["docs/data/writer-h200-b254d6c/next-dual-hdim128.json",
                           "docs/data/writer-h200-b254d6c/next-dual-hdim64.json"]),
    # Take-ahead 1 by default (9dd59e9), the current kernel.
    "9dd59e9": dict(peers_log=None,
                    peers_json=["docs/data/peers-h200-9dd59e9/peers/peers.json.gz"],
                    bench=["docs/data/peers-h200-9dd59e9/bench-hdim128.json",
                           "docs/data/peers-h200-9dd59e9/bench-hdim64.json"]),
    # The eleventh session's peers runs (12e4c7f and a687384, the same backward kernel; both
    # cover all 24 points, so a687384's rows are the ones scored). Peers only: --source peers.
    "a687384": dict(peers_log=None,
                    peers_json=["docs/data/probe-peers-h200-12e4c7f/peers.json.gz",
                                "docs/data/fwd-persistent-h200-a687384/peers.json.gz"],
                    bench=[]),
    # The twelfth session's peers run (b2831e5: the backward's step-top changes, v13).
    "b2831e5": dict(peers_log=None,
                    peers_json=["docs/data/final-h200-b2831e5/peers.json.gz"],
                    bench=[]),
    # The sixteenth session's peers run (19c11e2: 80-row tiles for fp16 / hdim 64, the split rank).
    # The planner models 64-row tiles for auto; the 80-row schedules' rows are what they ran.
    "19c11e2": dict(peers_log=None,
                    peers_json=["docs/data/final-h200-19c11e2/peers.json.gz"],
                    bench=[]),
    # The seventeenth session (ff7314a): full-mask shift's closed-form rank in the dQ writer (kWRank),
    # hdim 64 descending on 80-row tiles from 1k. Peers (one process, 3 rounds) and `dash-attn
    # bench` (every schedule, the defaults) of the same call.
    "ff7314a": dict(peers_log=None,
                    peers_json=["docs/data/final-h200-ff7314a/peers.json.gz"],
                    bench=["docs/data/final-h200-ff7314a/bench-hdim128.json",
                           "docs/data/final-h200-ff7314a/bench-hdim64.json"]),
    # The eighteenth session (106791e): causal symmetric shift's closed-form rank in the dQ writer
    # (kWRankSym) the default. Peers and `dash-attn bench` (every schedule) of the same call.
    "106791e": dict(peers_log=None,
                    peers_json=["docs/data/final-h200-106791e/peers.json.gz"],
                    bench=["docs/data/final-h200-106791e/bench-hdim128.json",
                           "docs/data/final-h200-106791e/bench-hdim64.json"]),
    # The nineteenth session's peers run (68d0908: the short-causal rule; causal 80-row tiles at
    # hdim 64 for atomic / spt / descending). Peers only (one process, 3 rounds).
    "68d0908": dict(peers_log=None,
                    peers_json=["docs/data/final-h200-68d0908/peers.json.gz"],
                    bench=[]),
    # The twentieth session's peers run (8d47f07: 96-row tiles at hdim 64 from 1k for atomic /
    # shift / symmetric_shift / spt / descending, and ascending at full masks). The planner models
    # 64-row tiles for auto; the 96-row schedules' rows are what they ran. Peers only (one
    # process, 3 rounds).
    "8d47f07": dict(peers_log=None,
                    peers_json=["docs/data/final-h200-8d47f07/peers.json.gz"],
                    bench=[]),
    # The gpu-next32.sh run (ef0214e: dQ's first contribution per ordered chain stored instead of
    # reduce-added, dq_accum not zeroed; the tiles of 8d47f07, plus causal ascending on 96 rows at
    # hdim 64 from 1k since 582a38f). Peers (one process, 3 rounds) and `dash-attn bench` (every
    # schedule) of the same kernel build.
    "ef0214e": dict(peers_log=None,
                    peers_json=["docs/data/next32-h200-ef0214e/peers/peers.json.gz"],
                    bench=["docs/data/next32-h200-ef0214e/suite/bench-hdim128.json",
                           "docs/data/next32-h200-ef0214e/suite/bench-hdim64.json"]),
    # The gpu-next35.sh run (e29ccbd: the kernels of ef0214e with programmatic dependent launch and
    # the polling postprocess on by default). Peers (one process, 3 rounds) and `dash-attn bench`
    # (every schedule) of the same kernel build.
    "e29ccbd": dict(peers_log=None,
                    peers_json=["docs/data/next35-h200-e29ccbd/peers/peers.json.gz"],
                    bench=["docs/data/next35-h200-e29ccbd/suite/bench-hdim128.json",
                           "docs/data/next35-h200-e29ccbd/suite/bench-hdim64.json"]),
    # The gpu-next36.sh run (b016d55: e29ccbd's kernels with the 16-byte preprocess by default).
    # Peers (one process, 3 rounds) and `dash-attn bench` (every schedule) of the same kernel
    # build; a check of the e29ccbd refit, not fitted on.
    "b016d55": dict(peers_log=None,
                    peers_json=["docs/data/next36-h200-b016d55/peers/peers.json.gz"],
                    bench=["docs/data/next36-h200-b016d55/suite/bench-hdim128.json",
                           "docs/data/next36-h200-b016d55/suite/bench-hdim64.json"]),
    # The gpu-next39.sh run (a72dbe9: full-mask shift at hdim 128 on the 80-row tile with two dQ
    # staging buffers by default, and the planner's two-buffer shift rule; peers at 1038b06, the
    # same kernels). Peers (one process, 3 rounds) and `dash-attn bench` (every schedule); scored
    # with the rule (CostParams::shift_full_tiles_hd128 as built in), not fitted on.
    "a72dbe9": dict(peers_log=None,
                    peers_json=["docs/data/next39-h200-a72dbe9/peers/peers.json.gz"],
                    bench=["docs/data/next39-h200-a72dbe9/bench-hdim128.json",
                           "docs/data/next39-h200-a72dbe9/bench-hdim64.json"]),
    # The gpu-next58.sh peers run (twenty-sixth session, 3eca68b: a72dbe9's backward kernels, the
    # planner with the 10% two-buffer shift tolerance and the grid-filling short-causal rule). Peers
    # alone (one process, 3 rounds); scored, not fitted on.
    "3eca68b": dict(peers_log=None,
                    peers_json=["docs/data/s26-h200/next58-peers/peers.json.gz"],
                    bench=[]),
    # The gpu-next69.sh run (twenty-eighth session, 6753141: the kernels with the last-wave split, the
    # host path read once per call). Peers (one process, 3 rounds) and `dash-attn bench` (auto's rows
    # only: bench_every_schedule's summary); scored, not fitted on. (The split is off in the model
    # here as for every recorded sweep: at the standard sweep it splits only atomic at hdim 64.)
    "6753141": dict(peers_log=None,
                    peers_json=["docs/data/s28-h200/next69-peers/peers.json.gz"],
                    bench=[]),
    # The gpu-next69.sh run of the thirtieth session (2562eb7: 16-byte dK / dV stores, the group take)
    # on an H100 SXM (no H200 came), peers alone; scored, not fitted on (the set is the H200's).
    "2562eb7-h100": dict(peers_log=None,
                         peers_json=["docs/data/s30-h100/next69-p2/peers.json.gz"],
                         bench=[]),
    # The thirty-first session's peers run (gpu-next84.sh, e9dc045's kernels with DASH_BWD_POST_SMS=2
    # the default up to 2048 keys) on an H100 SXM, peers alone; scored, not fitted on.
    "s31-h100": dict(peers_log=None,
                     peers_json=["docs/data/s31-h100/next84/peers.json.gz"],
                     bench=[]),
    # The thirty-second session's gpu-next87.sh run (52075b7: s31-h100's kernels) on an H100 SXM (no
    # H200 came): peers (3 rounds) and `dash-attn bench` of every schedule + auto at both head dims in
    # the same call; scored, not fitted on.
    "s32-h100": dict(peers_log=None,
                     peers_json=["docs/data/s32-h100/next87/peers.json.gz"],
                     bench=["docs/data/s32-h100/next87/bench-hdim128.json",
                            "docs/data/s32-h100/next87/bench-hdim64.json"]),
    # The thirty-fourth session's gpu-next96.sh run (4d63a71: the completion queue's defaults, v34) on an
    # H100 SXM: peers (3 rounds) and `dash-attn bench` of every schedule + auto; scored, not fitted on.
    "s34-h100": dict(peers_log=None,
                     peers_json=["docs/data/s34-h100/next96/peers.json.gz"],
                     bench=["docs/data/s34-h100/next96/bench-hdim128.json",
                            "docs/data/s34-h100/next96/bench-hdim64.json"]),
    # thirty-sixth session (H100): the head-block rule's first default build; bench only (no peers ran)
    "s36-h100": dict(peers_log=None, peers_json=[],
                     bench=["docs/data/s36-h100/next102/bench-hdim128.json",
                            "docs/data/s36-h100/next102/bench-hdim64.json"]),
    # thirty-seventh session (H100, the same kernels as s36-h100): gpu-next103.sh, peers at head_dim 128 only
    # (3 rounds) and `dash-attn bench` of every schedule + auto at both head dims
    "s37-h100": dict(peers_log=None,
                     peers_json=["docs/data/s37-h100/next103/peers.json.gz"],
                     bench=["docs/data/s37-h100/next103/bench-hdim128.json",
                            "docs/data/s37-h100/next103/bench-hdim64.json"]),
}
# The kernels with the two-buffer shift at hdim 128 (a72dbe9 on): the built-in rule applies.
DQ2_DATA = {"a72dbe9", "3eca68b", "6753141", "2562eb7-h100", "s31-h100", "s32-h100", "s34-h100", "s36-h100", "s37-h100"}
# The kernels whose postprocess polls (PDL and DASH_BWD_POST_POLL on by default, from e29ccbd): the
# built-in set's post_poll applies. The other data sets are scored with post_poll=0 (the same
# postprocess rate, after the main kernel), as the C++ Calibration tests score the older sweeps.
POLL_DATA = {"e29ccbd", "b016d55", "a72dbe9", "3eca68b", "6753141", "2562eb7-h100", "s31-h100", "s32-h100", "s34-h100", "s36-h100", "s37-h100"}


# The data sets before a72dbe9 ran full-mask shift with one dQ staging buffer at 80 rows (hdim 128): scored
# without the two-buffer shift rule (CostParams::shift_full_tiles_hd128, from the twenty-third session).
# The data sets whose kernels ran the group take (CostParams::group_take, the thirtieth session on);
# the others ran shift / symmetric shift with the taker's drain: scored with group_take=0.
GROUP_TAKE_DATA = {"2562eb7-h100", "s31-h100", "s32-h100", "s34-h100", "s36-h100", "s37-h100"}
def data_params(data):
    p = {} if data in DQ2_DATA else {"shift_full_tiles_hd128": 0.0}
    if data not in POLL_DATA:
        p["post_poll"] = 0.0
    if data not in GROUP_TAKE_DATA:
        p["group_take"] = 0.0
        p["shift_full_tiles_hd64"] = 64.0  # (the head_dim 64 shift rule of the drain kernels: from 8192 keys)
    return p
DEFAULT_DATA = "9dd59e9"
SEQLENS = [512, 1024, 2048, 4096, 8192, 16384]
# Point order of the tables: hdim 128 first (as in test_async_reduce.cpp).
POINTS = [(h, c, s) for h in (128, 64) for c in (False, True) for s in SEQLENS]


def shape_name(p):
    h, c, s = p
    return f"hdim {h} {'causal' if c else 'full'} {s}"


# ---- data ----------------------------------------------------------------------------------

def _open(path):
    """A data file under ROOT; docs/data keeps its large JSON files gzipped (NAME.json.gz)."""
    full = os.path.join(ROOT, path)
    return gzip.open(full, "rt") if full.endswith(".gz") else open(full)


def peers_from_log(path):
    """{(hdim, causal, seqlen): {impl: [bwd_ms, ...]}, ...}, auto rows as 'auto:<ran>'."""
    out, cur = {}, None
    head = re.compile(r"\[peers\] hdim (\d+) (causal|full) seqlen (\d+) batch (\d+) heads (\d+)")
    row = re.compile(r"\s+(dash:\w+)\s+fwd\s+([\d.]+) ms\s+[\d.]+ TF\s+bwd\s+([\d.]+) ms.*?(?:ran (\w+))?\s+first call")
    for line in _open(path):
        m = head.search(line)
        if m:
            cur = (int(m.group(1)), m.group(2) == "causal", int(m.group(3)))
            out.setdefault(cur, {})
            continue
        m = row.match(line)
        if m and cur is not None:
            name = m.group(1)[5:]
            if name == "auto":
                name = "auto:" + (m.group(4) or "?")
            out[cur].setdefault(name, []).append(float(m.group(3)))
    return out


def peers_from_json(path):
    out = {}
    for r in json.load(_open(path))["results"]:
        key = (r["hdim"], r["mask"] == "causal", r["seqlen"])
        d = out.setdefault(key, {})
        for impl, v in r["impls"].items():
            if not impl.startswith("dash:") or "bwd_ms" not in v:
                continue
            name = impl[5:]
            if name == "auto":
                name = "auto:" + v.get("auto_ran", "?")
            d.setdefault(name, []).append(v["bwd_ms"])
    return out


def peers_table(raw):
    """Per point, the rows of each schedule (descending: the dash:descending row and the
    dash:auto row where auto ran descending)."""
    out = {}
    for key, d in raw.items():
        t = {}
        for s in SCHEDULES:
            vals = list(d.get(s, []))
            if s == "descending":
                vals += d.get("auto:descending", [])
            if vals:
                t[s] = vals
        out[key] = t
    return out


def bench_table(paths):
    """{point: {schedule: ms}}; an `auto` row counts as a measurement of the schedule it ran
    (the mean of its rows, as peers' dash:auto rows), forward rows are skipped."""
    rows = {}
    for path in paths:
        for r in json.load(_open(path)):
            s = r["ran"] if r["schedule"] == "auto" else r["schedule"]
            if s not in SCHEDULES:
                continue  # the forward rows of a standard `dash-attn bench` sweep
            # symmetric_shift runs shift on a full mask (load() drops it there)
            assert r["ran"] == s or (s, r["ran"], r["causal"]) == ("symmetric_shift", "shift", False), r
            assert r["batch"] * r["seqlen"] == 16384 and r["heads"] * r["hdim"] == 2048, r
            rows.setdefault((r["hdim"], r["causal"], r["seqlen"]), {}).setdefault(s, []).append(r["bwd_ms"])
    return {p: {s: sum(v) / len(v) for s, v in d.items()} for p, d in rows.items()}


NOISE = 0.05    # run-to-run noise of one kernel in one process (pairs closer than this: coin flips)
OUTLIER = 0.10  # a peers row this far from the (scaled) bench time of the same schedule is dropped


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def load(source="combined", data=DEFAULT_DATA):
    """Returns ({point: {schedule: ms}}, notes, peers rows, bench)."""
    ds = DATA[data]
    notes = []
    if data == "250529d":
        log = peers_from_log(ds["peers_log"])
        full64 = peers_from_json(ds["peers_json"][0])
        # hdim 64 full from the 3505b4f run (the 250529d log stops inside hdim 64 full 4096): its
        # rows that the log also has are a cross-check of the two runs.
        for key, d in full64.items():
            if key in log:
                common = [s for s in SCHEDULES if s in log[key] and s in d]
                if common:
                    diffs = [log[key][s][0] / d[s][0] - 1 for s in common]
                    notes.append(f"{shape_name(key)}: 250529d log / 3505b4f json {min(diffs):+.1%}..{max(diffs):+.1%} "
                                 f"over {len(common)} schedules")
        raw = {k: v for k, v in log.items() if not (k[0] == 64 and not k[1])}
        raw.update(full64)
    else:
        raw = {}
        for path in ds["peers_json"]:
            raw.update(peers_from_json(path))
    peers = peers_table(raw)
    bench = bench_table(ds["bench"])
    out = {}
    for p in POINTS:
        pe, be = peers.get(p, {}), bench.get(p, {})
        if source == "peers":
            t = {s: sum(pe[s]) / len(pe[s]) for s in SCHEDULES if s in pe}
        elif source == "bench":
            t = {s: be[s] for s in SCHEDULES if s in be}
        else:
            # Scale bench to the peers run (the median ratio over the schedules both measured),
            # drop peers rows more than OUTLIER off the scaled bench time (a disturbed run: e.g.
            # hdim 64 causal 1024, where dash:descending and dash:auto, the same kernel, read
            # 1.076 and 0.775 ms), then the geometric mean of peers (its rows' mean) and bench.
            common = [s for s in SCHEDULES if s in pe and s in be]
            f = median([sum(pe[s]) / len(pe[s]) / be[s] for s in common]) if common else 1.0
            t, dropped = {}, []
            for s in SCHEDULES:
                rows = pe.get(s, [])
                if s in be:
                    kept = [v for v in rows if abs(v / (f * be[s]) - 1) <= OUTLIER]
                    dropped += [f"{s} {v:.3f} ms (bench {be[s]:.3f} x {f:.3f})" for v in rows if v not in kept]
                    t[s] = gmean([f * be[s]] + ([sum(kept) / len(kept)] if kept else []))
                elif rows:
                    t[s] = sum(rows) / len(rows)
            notes.append(f"{shape_name(p)}: peers / bench {f:.3f}; " + ", ".join(
                f"{s} {sum(pe[s]) / len(pe[s]) / (f * be[s]) - 1:+.1%}" for s in common)
                + (("; dropped peers rows: " + ", ".join(dropped)) if dropped else ""))
        t = {k: round(v, 4) for k, v in t.items()}  # as in the C++ table (--cpp-table)
        if p[1] is False:
            t.pop("symmetric_shift", None)  # runs shift on a full mask
        if "atomic" in t and any(s in t for s in DET):
            out[p] = t
    return out, notes, peers, bench


# ---- the planner ---------------------------------------------------------------------------

class Planner:
    def __init__(self, cli, jobs):
        self.cli = cli
        self.pool = cf.ThreadPoolExecutor(max_workers=jobs)
        self.cache = {}

    def _run(self, p, params, only):
        h, c, s = p
        cmd = [self.cli, "plan", "--batch", str(16384 // s), "--heads", str(2048 // h), "--kv-heads",
               str(2048 // h), "--seqlen", str(s), "--hdim", str(h), "--causal" if c else "--full",
               "--block-m", "64", "--block-n", "128", "--sms", "132", "--dispatch", "dynamic", "--json"]
        if only:
            cmd += ["--schedule", only]
        # Every dataset here ran kernels without the last-wave split (twenty-seventh session; at the
        # sweep's 2048 / 4096 tasks only atomic would split): scored without it unless --param says.
        if not any(k == "last_wave_split" for k, _ in params):
            cmd += ["--param", "last_wave_split=0"]
        for k, v in params:
            cmd += ["--param", f"{k}={v:.10g}"]
        rows = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        ms = {r["schedule"]: (r["makespan"] / 1000.0 if r["makespan"] is not None else math.inf) for r in rows}
        pick = None
        for r in rows:
            if r["recommended"]:
                pick = r["schedule"]
        return {"ms": ms, "pick": pick, "c": rows[0]["c"], "r": rows[0]["r"]}

    def predict(self, points, params, only=None):
        """{point: {'ms': {schedule: ms}, 'pick': schedule}} for this parameter set."""
        key_p = tuple(sorted(params.items()))
        todo = {p: self.pool.submit(self._run, p, key_p, only) for p in points if (p, key_p, only) not in self.cache}
        for p, fut in todo.items():
            self.cache[(p, key_p, only)] = fut.result()
        return {p: self.cache[(p, key_p, only)] for p in points}


# ---- scores --------------------------------------------------------------------------------

def compared(p, meas):
    return [s for s in DET if s in meas and not (s == "symmetric_shift" and not p[1])]


def score(meas, pred):
    sc = dict(points=0, auto_ok=0, best_top1=0, pairs=0, pairs_ok=0, pairs_ok_or_tied=0, all_pairs=0,
              all_pairs_ok=0, pairs5=0, pairs5_ok=0, atomic_err=0.0, ratio_sq=0.0, ratio_n=0, rows=[], misses=[])
    for p, m in meas.items():
        pr = pred[p]
        ks = compared(p, m)
        pm = pr["ms"]
        pick = pr["pick"]
        best = min(ks, key=lambda s: m[s])
        sc["points"] += 1
        sc["atomic_err"] += abs(pm["atomic"] / m["atomic"] - 1)
        for s in ks:
            e = math.log((pm[s] / pm["atomic"]) / (m[s] / m["atomic"]))
            sc["ratio_sq"] += e * e
            sc["ratio_n"] += 1
        ratio = m[pick] / m[best] if pick in m else math.nan
        ok = ratio <= 1.03
        sc["auto_ok"] += ok
        sc["best_top1"] += all(not (pm[s] < pm[best] * (1 - 1e-9)) for s in ks)
        good = min((pm[s] for s in ks if m[s] <= 1.03 * m[best]), default=math.inf)
        bad = min((pm[s] for s in ks if m[s] > 1.03 * m[best]), default=math.inf)
        margin = bad / good - 1 if math.isfinite(bad) else None
        sc["rows"].append(dict(point=p, best=best, pick=pick, ratio=ratio, margin=margin))
        if not ok:
            sc["misses"].append(f"{shape_name(p)}: {pick} picked, {best} {100 * (ratio - 1):.1f}% faster")
        for a, b in itertools.combinations(ks, 2):
            ma, mb, pa, pb = m[a], m[b], pm[a], pm[b]
            tie = abs(pa - pb) <= 1e-9 * max(pa, pb)
            sc["all_pairs"] += 1
            sc["all_pairs_ok"] += (not tie) and ((ma < mb) == (pa < pb))
            if abs(ma - mb) > NOISE * min(ma, mb):
                sc["pairs5"] += 1
                sc["pairs5_ok"] += (not tie) and ((ma < mb) == (pa < pb))
            if abs(ma - mb) <= 0.03 * min(ma, mb):
                continue
            sc["pairs"] += 1
            sc["pairs_ok"] += (not tie) and ((ma < mb) == (pa < pb))
            sc["pairs_ok_or_tied"] += tie or ((ma < mb) == (pa < pb))
    sc["atomic_err"] /= max(1, sc["points"])
    sc["ratio_err"] = math.sqrt(sc["ratio_sq"] / max(1, sc["ratio_n"]))
    return sc


def better_fit(a, b):
    """The project's fit order: auto within 3%, then pairs in order, then rms log ratio error."""
    return (a["auto_ok"], a["pairs_ok"], -a["ratio_err"]) > (b["auto_ok"], b["pairs_ok"], -b["ratio_err"])


def fit_key(s):
    return (-s["auto_ok"], -s["pairs_ok"], s["ratio_err"])


def summary(s):
    pct = lambda a, b: f"{a}/{b} ({100 * a / max(1, b):.0f}%)"
    return (f"auto within 3% {s['auto_ok']}/{s['points']}; best first {s['best_top1']}/{s['points']}; "
            f"pairs > 3% apart in order {pct(s['pairs_ok'], s['pairs'])} ({s['pairs_ok_or_tied']} counting ties); "
            f"pairs > 5% apart {pct(s['pairs5_ok'], s['pairs5'])}; all pairs {pct(s['all_pairs_ok'], s['all_pairs'])}; atomic error {100 * s['atomic_err']:.1f}%; "
            f"rms log ratio {s['ratio_err']:.3f}")


def split(meas, hdim):
    return {p: v for p, v in meas.items() if p[0] == hdim}


# ---- reports -------------------------------------------------------------------------------

def print_points(meas, pred, sc, markdown):
    if markdown:
        print("| shape | measured best | auto | auto / best | model margin |")
        print("|---|---|---|---:|---:|")
    else:
        print(f"{'shape':24s} {'measured best':16s} {'auto':16s} {'auto/best':>9s} {'margin':>8s}")
    for r in sc["rows"]:
        margin = "-" if r["margin"] is None else f"{100 * r['margin']:+.1f}%"
        flag = "" if r["ratio"] <= 1.03 else "  MISS"
        if markdown:
            ratio = f"{r['ratio']:.3f}" if r["ratio"] <= 1.03 else f"**{r['ratio']:.3f}**"
            print(f"| {shape_name(r['point'])} | {r['best']} | {r['pick']} | {ratio} | {margin} |")
        else:
            print(f"{shape_name(r['point']):24s} {r['best']:16s} {r['pick']:16s} {r['ratio']:9.3f} {margin:>8s}{flag}")


def print_schedules(meas, pred, markdown, before=None):
    """Per point and schedule: measured, predicted (and the `before` set's prediction)."""
    extra = " predicted ms, before |" if before else ""
    if markdown:
        print("| shape | schedule | measured ms | predicted ms |" + extra + " measured / atomic | predicted / atomic |")
        print("|---|---|---:|---:|" + ("---:|" if before else "") + "---:|---:|")
    for p, m in meas.items():
        pm = pred[p]["ms"]
        ks = compared(p, m)
        best = min(ks, key=lambda s: m[s])
        first = True
        for s in SCHEDULES:
            if s not in m:
                continue
            tag = (" (best)" if s == best else "") + (" (auto)" if s == pred[p]["pick"] else "")
            b = f" {before[p]['ms'][s]:.3f} |" if before else ""
            if markdown:
                print(f"| {shape_name(p) if first else ''} | {s}{tag} | {m[s]:.3f} | {pm[s]:.3f} |{b} "
                      f"{m[s] / m['atomic']:.3f} | {pm[s] / pm['atomic']:.3f} |")
            else:
                print(f"{shape_name(p) if first else '':24s} {s + tag:32s} {m[s]:8.3f} {pm[s]:8.3f}{b.strip(' |'):>9s} "
                      f"{m[s] / m['atomic']:6.3f} {pm[s] / pm['atomic']:6.3f}")
            first = False


def report(planner, meas, params, label, markdown=False, tables=True, before=None):
    pred = planner.predict(list(meas), params)
    before_pred = planner.predict(list(meas), before) if before is not None else None
    sc = score(meas, pred)
    print(f"== {label}: {json.dumps(params) if params else 'the built-in set (kSm90Params)'}")
    for h in (128, 64):
        sh = score(split(meas, h), pred)
        print(f"  hdim {h}: {summary(sh)}")
    print(f"  both:     {summary(sc)}")
    c = {h: planner.predict([(h, False, 512)], params)[(h, False, 512)] for h in (128, 64)}
    print(f"  c = {c[128]['c']:.3f} / {c[64]['c']:.3f} us, r = {c[128]['r']:.3f} / {c[64]['r']:.3f} us (hdim 128 / 64)")
    if sc["misses"]:
        print("  misses: " + "; ".join(sc["misses"]))
    if tables:
        print_points(meas, pred, sc, markdown)
        print()
        print_schedules(meas, pred, markdown, before_pred)
        print()
    return sc


# ---- fit -----------------------------------------------------------------------------------

def fit(planner, meas, base, grid_compute, grid_rest, top=8, atomic_slack=0.005):
    """Compute first (per_sm_tflops, compute_overhead_us, task_overhead_us by the mean atomic
    error, atomic predictions only), then the rest of the grid by better_fit among the
    candidates that keep the atomic error within atomic_slack of the compute fit's: a reduce
    so slow that the writer, not the compute, sets atomic's time contradicts the compute fit
    (measured atomic tracks the compute), whatever it does to the ranking."""
    points = list(meas)
    best_c, best_err = None, math.inf
    for tf, ov, task in itertools.product(*grid_compute):
        params = dict(base, per_sm_tflops=tf, compute_overhead_us=ov, task_overhead_us=task)
        pred = planner.predict(points, params, only="atomic")
        err = sum(abs(pred[p]["ms"]["atomic"] / meas[p]["atomic"] - 1) for p in points) / len(points)
        print(f"compute tflops {tf:.2f} overhead {ov:.3f} task {task:.1f}: atomic error {100 * err:.2f}%", flush=True)
        if err < best_err:
            best_err, best_c = err, params
    print(f"compute fit: {best_c} (atomic error {100 * best_err:.2f}%)", flush=True)
    cands = []
    names = list(grid_rest)
    for values in itertools.product(*(grid_rest[n] for n in names)):
        params = dict(best_c, **dict(zip(names, values)))
        sc = score(meas, planner.predict(points, params))
        print(" ".join(f"{n} {v:g}" for n, v in zip(names, values)) + ": " + summary(sc), flush=True)
        cands.append((fit_key(sc), params, sc))
    cands.sort(key=lambda c: c[0])
    excluded = [c for c in cands if c[2]["atomic_err"] > best_err + atomic_slack]
    cands = [c for c in cands if c[2]["atomic_err"] <= best_err + atomic_slack]
    print(f"{len(excluded)} candidates excluded: atomic error above {100 * (best_err + atomic_slack):.2f}%"
          + (f" (the best of them: {summary(excluded[0][2])})" if excluded else ""))
    print("best candidates:")
    for key, params, sc in cands[:top]:
        print(f"  {json.dumps({n: params[n] for n in names})}: {summary(sc)}")
    return best_c, cands


# The default grids of --fit (the ones behind the current kSm90Params): compute by the mean
# atomic error, then the reduce and the visit-order penalty (knee 32, stage buffers 2).
# The e29ccbd refit (twenty-second session; the command is in the docstring's usage):
# the compute grid around its optimum (the 250529d grid, 4.9-6.1 / 0.15-0.35 / 15-19, had it at its
# task_overhead_us edge once the postprocess was in the model), then the reduce, the penalty base
# and the postprocess rate. (The 250529d fit's grids: compute 4.9-6.1 x 0.15-0.35 x 15-19, then
# latency 0-1.5 x 16-128 GB/s x base 0.25-0.45 x slope 0.004-0.012.)
FIT_COMPUTE = [("per_sm_tflops", [5.5, 5.8, 6.1, 6.4]),
               ("compute_overhead_us", [0.15, 0.2, 0.25, 0.3]),
               ("task_overhead_us", [9.0, 11.0, 13.0, 15.0, 17.0])]
FIT_REST = {"reduce_latency_us": [0.25, 0.5, 0.75, 1.0],
            "reduce_gbytes_per_s": [16.0, 32.0, 64.0],
            "order_penalty_base": [0.25, 0.35],
            "order_penalty_slope": [0.008],
            "post_gbytes_per_s": [1600.0, 1800.0, 2000.0, 2200.0]}


def print_cpp_table(meas):
    """The measured table as a C++ initializer (kMeasuredSm90Dual in tests/cpu/test_async_reduce.cpp:
    {hdim, seqlen, causal, {ascending, spt, descending, shift, symmetric_shift, atomic}}; on a full
    mask symmetric_shift runs shift and is not compared: shift's time is repeated)."""
    for p, m in meas.items():
        h, c, s = p
        row = [m.get(k, m["shift"] if k == "symmetric_shift" else math.nan) for k in SCHEDULES]
        print(f"  {{{h}, {s}, {'true' if c else 'false'}, {{" + ", ".join(f"{v:.4f}" for v in row) + "}},")


def parse_grid(spec):
    out = {}
    for item in spec or []:
        name, vals = item.split("=", 1)
        out[name] = [float(v) for v in vals.split(",")]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build-helper", "dash-attn"),
                    help="the dash-attn binary (a CPU-only build is enough; default build-helper/dash-attn)")
    ap.add_argument("--data", choices=sorted(DATA), default=DEFAULT_DATA,
                    help=f"the measurements (default {DEFAULT_DATA}; e29ccbd: the data kSm90Params is fitted on)")
    ap.add_argument("--source", choices=["combined", "peers", "bench"], default="combined")
    ap.add_argument("--param", action="append", default=[], help="NAME=VALUE, passed to `dash-attn plan --param`")
    ap.add_argument("--compare", action="append", default=[],
                    help="a second set to score, as NAME=VALUE,NAME=VALUE (repeatable)")
    ap.add_argument("--before", help="a set (NAME=VALUE,...; '' = the built-in one) whose predictions the "
                    "per-schedule table shows next to the scored set's")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--no-tables", action="store_true")
    ap.add_argument("--notes", action="store_true", help="print the cross-checks between the data sources")
    ap.add_argument("--fit", action="store_true", help="grid search (FIT_COMPUTE, then FIT_REST); "
                    "--grid NAME=v1,v2,... replaces one grid")
    ap.add_argument("--grid", action="append", help="NAME=v1,v2,... (per_sm_tflops, compute_overhead_us, "
                    "task_overhead_us: the compute stage; any other CostParams field: the second stage)")
    ap.add_argument("--cpp-table", action="store_true", help="print the measured table as a C++ initializer")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()

    if not os.access(args.cli, os.X_OK):
        sys.exit(f"fit_planner: no binary at {args.cli} (cmake -S . -B build-helper -G Ninja "
                 "-DCMAKE_BUILD_TYPE=Release -DDASH_BUILD_CUDA=OFF && cmake --build build-helper)")
    meas, notes, _, _ = load(args.source, args.data)
    ds = DATA[args.data]
    files = ([ds["peers_log"]] if ds["peers_log"] else []) + ds["peers_json"] + ds["bench"]
    print(f"fit_planner: {len(meas)} points, data {args.data}, source {args.source}; files: " + ", ".join(files))
    if args.notes:
        for n in notes:
            print("  " + n)
    planner = Planner(args.cli, args.jobs)
    base = data_params(args.data)
    if base:
        why = {"shift_full_tiles_hd128": "one dQ staging buffer at 80 rows",
               "post_poll": "the postprocess after the main kernel", "group_take": "the taker's drain",
               "shift_full_tiles_hd64": "the drain kernels' head_dim 64 shift rule"}
        print(f"  (scored with {', '.join(f'{k}={v:g}' for k, v in base.items())}: this data set's kernel ran "
              + ", ".join(why.get(k, k) for k in base) + ")")
    params = dict(base, **dict((k, float(v)) for k, v in (x.split("=", 1) for x in args.param)))
    if args.fit:
        grid = parse_grid(args.grid)
        compute = [grid.pop(n, d) for n, d in FIT_COMPUTE]
        rest = dict(FIT_REST)
        rest.update(grid)
        fit(planner, meas, params, compute, rest)
        return
    if args.cpp_table:
        print_cpp_table(meas)
        return
    def parse_set(spec):
        return dict(base, **dict((k, float(v)) for k, v in (x.split("=", 1) for x in spec.split(",") if x)))
    before = parse_set(args.before) if args.before is not None else None
    report(planner, meas, params, "set", args.markdown, not args.no_tables, before)
    for spec in args.compare:
        report(planner, meas, parse_set(spec), "compare", args.markdown, not args.no_tables)


if __name__ == "__main__":
    main()
