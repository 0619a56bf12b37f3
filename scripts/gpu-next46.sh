#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap: bins/new = this commit, bins/old = the build before the tree max): the
#          forward's row max as a tree of four partial maxima per row (attn_fwd_sm90.cu
#          softmax_block; same bits by construction). ncu at hdim 64 (gpu-next45.sh) showed the
#          max as one serial FMNMX chain of 32 per row on every key block's critical path. The
#          forward tests (its first run matched none: the filter lacked the parameterised prefix; float64 reference, ping-pong / persistent / fp16 / 176-key bits), then
#          2 interleaved rounds of old / new `dash-attn bench` (normal data, descending) at hdim
#          128 and 64, full and causal, 1k-16k: forward time old / new, and grad_hash equal
#          (the backward reads O and LSE: any changed forward bit changes it).
# (As run in the twenty-fourth session the A/B was inline and compared grad_hash; it now uses
# gpu-common.sh's fwd_ab with the same bench commands (fwd_ab_table.py falls back to grad_hash there).)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next46
{
if [ "${PART:-1}" = 1 ]; then
  echo "== forward tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='*FwdSm90*' > "$O/test-fwd.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure" "$O/test-fwd.log" | head -12
  echo "== A/B $(el)"
  fwd_ab "old new" 2 128,64
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
