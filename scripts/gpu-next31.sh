#!/usr/bin/env bash
# GPU machine (twentieth session), bin-only (.snap with scripts/ and bins.tgz): the dQ first store
# (p.dq_first_store, DASH_BWD_DQ_FIRST_STORE; dq_accum no longer zeroed for ordered schedules):
# its test and the determinism / accuracy tests in 4 shards, memcheck / racecheck of a causal
# 1000-row launch (the test covers seqlen_q > seqlen_k), then the A/B against
# DASH_BWD_DQ_FIRST_STORE=0 at the short lengths where the saved memset shows (switch_ab; the 3c5c9de
# run, before switch_ab, named its files fs*.json; 2 interleaved
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
switch_ab DASH_BWD_DQ_FIRST_STORE "128 64" 0 descending,spt 512,1024,2048,4096
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
