#!/usr/bin/env bash
# GPU machine (thirtieth session): the group take (DASH_BWD_GROUP_TAKE=1, docs/bwd-sm90.md "The drain").
# Everything goes into $OUT/all.tgz. .snap: bins/new = HEAD.
#   PART=1: tests BwdSm90GroupTake.* (bits against the drain, every take-ahead, wide groups on small
#           grids, hang watchdog), memcheck / racecheck / synccheck of shift and symmetric shift with
#           the switch on (1000 keys), then the switch A/B: 2 interleaved rounds of `dash-attn bench`,
#           shift and symmetric shift, hdim 128 and 64, full and causal, 512-16k.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next79
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  DASH_TEST_WATCHDOG_S=60 timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='BwdSm90GroupTake.*' > "$O/tests.log" 2>&1
  echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$O/tests.log" | head -12
  echo "== sanitizers $(el)"
  for tool in memcheck racecheck synccheck; do
    DASH_BWD_GROUP_TAKE=1 timeout -k 5 100 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 128 --causal 0,1 \
      --seqlen 1000 --batch 2 --heads 4 --kv-heads 2 --schedules shift,symmetric_shift --reps 1 > "$O/san-$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
  done
  echo "== A/B $(el)"
  switch_ab DASH_BWD_GROUP_TAKE "128 64" "0 1" shift,symmetric_shift 512,1024,2048,4096,16384
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
