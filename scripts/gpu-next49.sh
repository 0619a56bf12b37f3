#!/usr/bin/env bash
# GPU machine (twenty-fifth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap: bins/old = the default forward (DASH_FWD_RESCALE_SKIP=-1: every key block
#          rescales O), bins/r0 = a warp skips the rescale when none of its 16 rows' max grew (the
#          same bits), bins/r8 = a warp keeps its rows' stale maxima while none grew by more than 2^8
#          (FlashAttention-4's conditional rescale; other bits)): the forward tests of r0 and r8,
#          then 3 interleaved rounds of `dash-attn bench` at hdim 64 and 128, full and causal,
#          1k-16k (normal data): forward time per binary, fwd_hash old == r0; then ncu instruction
#          counts of the hdim 64 / 128 full 8k forward per binary. (Tests of r8 only: r0 is checked by
#          fwd_hash; the tree plus three test binaries is over the 64 MiB carry.)
# (As run: the commit before the A/B moved into gpu-common.sh's fwd_ab / fwd_ncu, same commands.)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next49
BINS="old r0 r8"
{
if [ "${PART:-1}" = 1 ]; then
  for b in r8; do
    echo "== forward tests $b $(el)"
    timeout -k 5 200 bins/$b/dash_gpu_tests --gtest_filter='*FwdSm90*:*Fwd*Sm90*' > "$O/test-fwd-$b.log" 2>&1
    echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/test-fwd-$b.log" | head -12
  done
  echo "== A/B $(el)"
  fwd_ab "$BINS" 3
  echo "== ncu $(el)"
  fwd_ncu "$BINS"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
