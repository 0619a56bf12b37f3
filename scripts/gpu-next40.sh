#!/usr/bin/env bash
# GPU machine (written in the twenty-third session for the next one). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked): the early-dV draft of the two-buffer kernel
#          (DASH_BWD_SM90_DQ2_EARLY_DV=1, attn_bwd_sm90.cu kDq2EarlyDv; compile-checked only): its test
#          (bits against the two-buffer kernel, float64 accuracy, reruns, grids, dispatches), the
#          sanitizers on one small launch, then the A/B: hdim 128 full 1k-16k, 2 interleaved rounds
#          of `dash-attn bench` with (a) the defaults, (b) 80 rows forced, two buffers everywhere
#          (DASH_BWD_SM90_DQ2=1), (c) (b) with early dV. If (c) closes the two-buffer kernel's 2-4% on
#          atomic, the next step is two buffers for atomic (and descending where it wins) by default.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next40
unset DASH_BWD_SM90_DQ2 DASH_BWD_SM90_DQ2_EARLY_DV
{
if [ "${PART:-1}" = 1 ]; then
  echo "== test $(el)"
  DASH_TEST_SM90_DRAFT=1 timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='BwdSm90Dq2EarlyDv.*:BwdSm90Dq2.*' > "$O/test-dq2.log" 2>&1
  echo "test rc $?"; grep -E "^\[  (FAILED|     OK|  PASSED)|Failure|Expected|Which is|actual" "$O/test-dq2.log" | head -30
  tall_ab "DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1" "DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1 DASH_BWD_SM90_DQ2_EARLY_DV=1"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
