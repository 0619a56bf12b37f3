#!/usr/bin/env bash
# GPU machine (twentieth session), bin-only (.snap with scripts/ and bins.tgz): two open questions of
# the 8d47f07 runs, `dash-attn bench` only. Everything goes into $OUT/all.tgz.
#  1. causal ascending at hdim 64 kept 64-row tiles (not measured): forced 64 / 80 / 96 rows,
#     causal 1k-16k, 2 interleaved rounds;
#  2. hdim 128 causal 8k / 16k: ascending against descending (the planner's pick) in 5 interleaved
#     rounds (peers put ascending ahead at 16k by the fastest call in three runs, by the medians
#     in one of them).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next29
{
echo "== causal ascending at hdim 64 $(el)"
for r in 1 2; do
  for f in 64 80 96; do
    DASH_BWD_SM90_BLOCK_M=$f timeout -k 5 60 bins/new/dash-attn bench --hdim 64 --causal 1 \
      --seqlen 1024,2048,4096,8192,16384 --schedules ascending,descending --json "$O/casc-$f-r$r.json" > /dev/null 2>&1 || echo "casc $f rc $?"
  done
done
python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
for f in (64, 80, 96):
    t = {}
    for r in (1, 2):
        for row in json.load(open(f"{O}/casc-{f}-r{r}.json")):
            t.setdefault((row["schedule"], row["seqlen"]), []).append((row["bwd_ms"], row["block_m"]))
    for sc in ("ascending", "descending"):
        print(f"  forced {f:3d} {sc:10s} " + "  ".join(f"{s}: {min(v)[0]:.3f} ({min(v)[1]})" for (x, s), v in sorted(t.items()) if x == sc))
PY
echo "== hdim 128 causal ascending / descending $(el)"
for r in 1 2 3 4 5; do
  timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 1 --seqlen 8192,16384 --schedules ascending,descending,auto \
    --json "$O/c128-r$r.json" > /dev/null 2>&1 || echo "c128 r$r rc $?"
done
python3 - "$O" <<'PY'
import json, sys, statistics
O = sys.argv[1]
t = {}
for r in range(1, 6):
    for row in json.load(open(f"{O}/c128-r{r}.json")):
        t.setdefault((row["schedule"], row["seqlen"]), []).append(row["bwd_ms"])
for s in (8192, 16384):
    for sc in ("ascending", "descending", "auto"):
        v = t[(sc, s)]
        print(f"  hdim 128 causal {s} {sc:10s} min {min(v):.3f} median {statistics.median(v):.3f} ms  ({' '.join(f'{x:.3f}' for x in v)})")
PY
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
