#!/usr/bin/env bash
# GPU machine (twenty-third session, run once at d3ccd21, when the two buffers were a draft: its "bm80" config ran shift with one buffer; since a72dbe9 shift takes two by default). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked): the two-staging-buffer draft at 80 rows (DASH_BWD_SM90_DQ2=1,
#          attn_bwd_sm90.cu kDq2): its test (bits against the one-buffer kernel, float64 accuracy,
#          reruns, grids, dispatches), the sanitizers on one small launch, then the A/B: hdim 128
#          full 1k-16k, 2 interleaved rounds of `dash-attn bench` with (a) the defaults, (b) 80 rows
#          forced, one buffer, (c) 80 rows forced, two buffers.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next38
unset DASH_BWD_SM90_DQ2
{
if [ "${PART:-1}" = 1 ]; then
  echo "== test $(el)"
  timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='BwdSm90Dq2Draft.*:BwdSm90DualWriter.*:BwdSm90Fp16Bm80.*' > "$O/test-dq2.log" 2>&1
  echo "test rc $?"; grep -E "^\[  (FAILED|     OK|  PASSED)|Failure|Expected|Which is|actual" "$O/test-dq2.log" | head -30
  tall_ab "DASH_BWD_SM90_BLOCK_M=80" "DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
