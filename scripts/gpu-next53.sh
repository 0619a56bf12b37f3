#!/usr/bin/env bash
# GPU machine (twenty-fifth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD's default build, Q in registers at hdim 128 causal): the forward
#          tests, the accuracy and determinism suites, then memcheck / racecheck / synccheck of the
#          persistent hdim 128 causal forward test (Q released right after its ldmatrix and reloaded
#          by TMA for the CTA's next tile).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next53
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='*FwdSm90*:Grid/Accuracy.*:Schedules/Determinism.*' > "$O/tests.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -12
  echo "== sanitizers $(el)"
  sanitize_filter 'Shapes/FwdSm90Persistent.BitwiseEqualForEveryGridSize/bf16_d128_causal_b1_sq1000_sk1000_h8_2' memcheck racecheck synccheck
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
