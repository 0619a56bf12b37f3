#!/usr/bin/env bash
# GPU machine (twenty-first session), one call of about 4-6 minutes, from .snap (bins/ unpacked as in
# gpu-next28.sh). Everything goes into $OUT/all.tgz.
# Programmatic dependent launch of the backward (DASH_BWD_PDL=1) and the polling postprocess
# (DASH_BWD_POST_POLL=1), compile-checked only so far:
#   1. their test BwdSm90Pdl (the watchdog catches a hang), then the determinism / grid / first-store
#      tests with both switches on;
#   2. memcheck / racecheck / synccheck of a small launch with both on;
#   3. 2 interleaved rounds of `dash-attn bench` for each switch (PDL against none; polling against
#      PDL alone) at hdim 128 / 64, full and causal, 512-4k (descending, spt, atomic).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next33
unset DASH_BWD_PDL DASH_BWD_POST_POLL
{
  echo "== pdl tests, and the determinism / first-store / auto tests with PDL + polling (3 processes) $(el)"
  DASH_TEST_WATCHDOG_S=60 timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='BwdSm90Pdl.*' > "$O/pdl-tests.log" 2>&1 &
  DASH_BWD_PDL=1 DASH_BWD_POST_POLL=1 DASH_TEST_WATCHDOG_S=60 timeout -k 5 240 bins/new/dash_gpu_tests \
    --gtest_filter='*Determinism*' > "$O/det-pdl.log" 2>&1 &
  DASH_BWD_PDL=1 DASH_BWD_POST_POLL=1 DASH_TEST_WATCHDOG_S=60 timeout -k 5 240 bins/new/dash_gpu_tests \
    --gtest_filter='BwdSm90DqFirstStore.*:BwdSm90Auto.*' > "$O/fs-pdl.log" 2>&1 &
  wait
  for f in pdl-tests det-pdl fs-pdl; do
    echo "$f: $(grep -E '^\[  (PASSED|FAILED) ' "$O/$f.log" | tr '\n' ' ')"
    grep -E "Failure|hang|watchdog" -A6 "$O/$f.log" | head -24
  done
  for tool in memcheck racecheck synccheck; do
    DASH_BWD_PDL=1 DASH_BWD_POST_POLL=1 timeout -k 5 90 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 128 \
      --causal 1 --seqlen 1000 --batch 1 --heads 4 --kv-heads 2 --schedules descending,shift,atomic --reps 1 \
      > "$O/san-$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
  done
  echo "== A/B $(el)"
  switch_ab DASH_BWD_PDL "128 64" "0 1" descending,spt,atomic 512,1024,2048,4096
  export DASH_BWD_PDL=1
  switch_ab DASH_BWD_POST_POLL "128 64" "0 1" descending,spt 512,1024,2048,4096
  unset DASH_BWD_PDL
  echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
