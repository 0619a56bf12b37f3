#!/usr/bin/env bash
# GPU machine (twentieth session), bin-only (.snap with scripts/ and bins.tgz): the dQ first store
# (p.dq_first_store, DASH_BWD_DQ_FIRST_STORE; dq_accum no longer zeroed for ordered schedules):
# its test and the determinism / accuracy tests in 4 shards, memcheck / racecheck of a causal
# 1000-row launch (the test covers seqlen_q > seqlen_k), then the A/B against
# DASH_BWD_DQ_FIRST_STORE=0 at the short lengths where the saved memset shows (2 interleaved
# rounds). Everything goes into $OUT/all.tgz.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next31
unset DASH_BWD_DQ_FIRST_STORE
{
echo "== tests $(el)"
DASH_TEST_WATCHDOG_S=60 GTEST_FILTER='BwdSm90DqFirstStore.*:*Determinism*:BwdSm90Accuracy.*' \
  bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$O" ${LIMIT_S:-95}
for tool in memcheck racecheck; do
  timeout -k 5 30 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 128 --causal 1 --seqlen 1000 \
    --batch 1 --heads 4 --kv-heads 2 --schedules descending,shift --reps 1 > "$O/san-$tool.log" 2>&1
  echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
done
echo "== A/B $(el)"
for r in 1 2; do
  for fs in 0 1; do
    for d in 128 64; do
      DASH_BWD_DQ_FIRST_STORE=$fs timeout -k 5 40 bins/new/dash-attn bench --hdim $d --causal 0 --seqlen 512,1024,2048,4096 \
        --schedules descending,spt --json "$O/fs$fs-d$d-r$r.json" > /dev/null 2>&1 || echo "bench $fs $d rc $?"
    done
  done
done
python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
for d in (128, 64):
    t = {}
    for fs in (0, 1):
        for r in (1, 2):
            for row in json.load(open(f"{O}/fs{fs}-d{d}-r{r}.json")):
                t.setdefault((fs, row["schedule"], row["seqlen"]), []).append(row["bwd_ms"])
    for sc in ("descending", "spt"):
        print(f"hdim {d} full {sc:10s} first-store speed / zeroed (min of 2): " + "  ".join(
            f"{s}: {min(t[(0, sc, s)]) / min(t[(1, sc, s)]):.3f} ({min(t[(1, sc, s)]):.3f} ms)" for s in (512, 1024, 2048, 4096)))
PY
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
