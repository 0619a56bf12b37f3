#!/usr/bin/env bash
# GPU machine (twenty-fifth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap: bins/old = the default forward (S = Q K^T as wgmma SS), bins/q1 = Q as
#          register A fragments of the S GEMM (wgmma RS, ldmatrix once per tile, Q released right
#          after; DASH_FWD_Q_REGS=1)): the forward tests of q1, then 3 interleaved rounds of
#          `dash-attn bench` at hdim 64 and 128, full and causal, 1k-16k (normal data): forward time
#          per binary, fwd_hash old vs q1 (the same products, so the same bits expected); then ncu of
#          the hdim 64 / 128 full 8k forward per binary (time, instructions, tensor pipe, clock,
#          shared-memory bank reads).
# (As run: the commit before the A/B moved into gpu-common.sh's fwd_ab / fwd_ncu, same commands.)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next52
BINS="old q1"
{
if [ "${PART:-1}" = 1 ]; then
  echo "== forward tests q1 $(el)"
  timeout -k 5 200 bins/q1/dash_gpu_tests --gtest_filter='*FwdSm90*' > "$O/test-fwd-q1.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/test-fwd-q1.log" | head -12
  echo "== A/B $(el)"
  fwd_ab "$BINS" 3
  echo "== ncu $(el)"
  fwd_ncu "$BINS" l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
