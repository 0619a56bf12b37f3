#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap: bins/old = the kernels of a72dbe9, bins/new = a 4-stage K/V ring in the
#          head_dim 64 ping-pong forward (DASH_FWD_STAGES_HD64=4; 144 KiB of shared memory, cuDNN's
#          kernel holds 134), bins/n0 = the same with every softmax exp2 on MUFU (built with
#          -DDASH_FWD_EXP2_FMA_EVERY_HD64=0; different bits by design)): the forward tests of
#          bins/new, then 2 interleaved rounds of `dash-attn bench` at hdim 64 full and causal
#          1k-16k (normal data): forward time per binary, grad_hash old == new.
# (As run in the twenty-fourth session the A/B was inline and compared grad_hash; it now uses
# gpu-common.sh's fwd_ab with the same bench commands (fwd_ab_table.py falls back to grad_hash there).)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next47
{
if [ "${PART:-1}" = 1 ]; then
  echo "== forward tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='*FwdSm90*' > "$O/test-fwd.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/test-fwd.log" | head -12
  echo "== A/B $(el)"
  fwd_ab "old new n0" 2 64
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
