#!/usr/bin/env bash
# GPU machine (twenty-seventh session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD's build with the last-wave split, the default):
#     (a) the GPU tests the split touches: the new BwdSm90LastWaveSplit, the default kernels' accuracy and
#         determinism suites, the switch tests that compare kernels for bits (take-late, 24-register
#         split, two buffers), BwdSm90Auto, the first-store test;
#     (b) compute-sanitizer memcheck / racecheck / synccheck on one split launch (bench at hdim 128 full
#         1000 rows, 8 / 2 heads: 16 tasks in 8 pieces; descending and atomic);
#     (c) the A/B: DASH_BWD_SPLIT_LAST=0 / 1, 2 interleaved rounds, hdim 128 and 64 full 1k-16k,
#         ascending / descending / spt / atomic / auto (switch_ab), and a few-task shape (1 x 8 heads).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next62
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  timeout -k 5 330 bins/new/dash_gpu_tests --gtest_filter='*LastWaveSplit*:BwdSm90Determinism*:*BwdSm90Accuracy*:*BwdSm90Wide*:*BwdSm90Dq2.*:*TakeLate*:*Producer24*:Schedules/Determinism.*:*BwdSm90Auto*:*DqFirstStore*:*Fp16Bm80*:*D64Bm80*' > "$O/tests.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -20
  echo "== sanitizers $(el)"
  for tool in memcheck racecheck synccheck; do
    timeout -k 5 90 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 1000 --batch 1 \
      --heads 8 --kv-heads 2 --schedules descending,atomic --reps 1 > "$O/san-$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
  done
  echo "== A/B $(el)"
  switch_ab DASH_BWD_SPLIT_LAST "128 64" "0" ascending,descending,spt,atomic,auto 1024,2048,4096,8192,16384
  echo "== few tasks $(el)"
  for r in 1 2; do
    for v in 0 1; do
      DASH_BWD_SPLIT_LAST=$v timeout -k 5 40 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 1024,4096 --batch 1 \
        --heads 8 --kv-heads 8 --schedules descending,atomic --json "$O/few-v$v-r$r.json" > "$O/few-v$v-r$r.log" 2>&1 || echo "few rc $?"
    done
  done
  grep -h "descending\|atomic" "$O"/few-v*-r2.log | head -8
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
