#!/usr/bin/env bash
# GPU machine (thirty-first session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests), bins/trace/dash-attn
# = HEAD built with -DDASH_BWD_TRACE=ON; head.tgz = `git archive HEAD`.
#   PART=1: the tests of the post-SMs default (DASH_BWD_POST_SMS unset: 2 up to 2048 keys) while the
#           package builds; the per-side timeline of hdim 128 causal descending / symmetric shift at 8k /
#           16k (where the causal target is missed); the Python suite; peers (3 rounds, the standard sweep).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next84
{
if [ "${PART:-1}" = 1 ]; then
  head_pip_bg || exit 1
  echo "== pip (background) + tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='BwdSm90PostSms.*:EnvSwitches.*:BwdSm90Auto.*:BwdSm90GroupTake.*' \
    > "$O/tests.log" 2>&1; echo "tests rc $? $(el)"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$O/tests.log" | head
  pip_wait; echo "pip done $(el)"
  echo "== trace $(el)"
  trace_sides "128 1 descending 8192" "128 1 symmetric_shift 8192" "128 1 descending 16384" "128 1 symmetric_shift 16384"
  PEERS_TIMEOUT=300 PEERS_BUDGET=270 pytest_and_peers
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
