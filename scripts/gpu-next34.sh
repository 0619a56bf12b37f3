#!/usr/bin/env bash
# GPU machine (twenty-first session), one call of about 6-8 minutes, from .snap (bins/ unpacked as in
# gpu-next28.sh). Everything goes into $OUT/all.tgz.
# Programmatic dependent launch now the default (DASH_BWD_PDL; gpu-next33.sh measured +0-3% at
# 512-2k) and the polling postprocess rewritten as one block per dQ tile (DASH_BWD_POST_POLL=1;
# gpu-next33.sh's one-chunk-per-thread version lost 2-8% at 512-1k):
#   1. the whole GPU suite (6 shards) with PDL on by default, the sanitizers, and alongside it
#      BwdSm90Pdl (the plain launches against PDL and PDL + polling) and the determinism tests
#      with the polling postprocess;
#   2. 2 interleaved rounds of `dash-attn bench`, polling against PDL alone, hdim 128 / 64, full and
#      causal, 512-4k (descending, spt).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next34
unset DASH_BWD_PDL DASH_BWD_POST_POLL
{
  echo "== suite + pdl tests $(el)"
  DASH_TEST_WATCHDOG_S=60 timeout -k 5 300 bins/new/dash_gpu_tests --gtest_filter='BwdSm90Pdl.*' > "$O/pdl-tests.log" 2>&1 &
  DASH_BWD_POST_POLL=1 DASH_TEST_WATCHDOG_S=60 timeout -k 5 300 bins/new/dash_gpu_tests \
    --gtest_filter='*Determinism*:BwdSm90DqFirstStore.*' > "$O/det-poll.log" 2>&1 &
  SHARDS=6 TEST_FILTER='*' LIMIT_S=${LIMIT_S:-320} bash scripts/gpu-bwd-tests.sh "$O"
  wait
  for f in pdl-tests det-poll; do
    echo "$f: $(grep -E '^\[  (PASSED|FAILED) |^compared' "$O/$f.log" | tr '\n' ' ')"
    grep -E "Failure|hang|watchdog" -A6 "$O/$f.log" | head -24
  done
  echo "== A/B $(el)"
  switch_ab DASH_BWD_POST_POLL "128 64" "0 1" descending,spt 512,1024,2048,4096
  echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
