#!/usr/bin/env bash
# GPU machine (twenty-third session), two calls of about 5-6 minutes. Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked): the whole GPU suite with full-mask shift's two-buffer kernel
#          as its default and the planner's two-buffer shift rule (6 shards, the sanitizers); `dash-attn
#          bench` of every schedule.
#   PART=2 (from a clean export of HEAD with bins/ unpacked): pip install + pytest, then the peers
#          benchmark (all 24 points) for the README table.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next39
unset DASH_BWD_DQ_FIRST_STORE DASH_BWD_PDL DASH_BWD_POST_POLL DASH_BWD_PRE_VEC DASH_BWD_SM90_DQ2
{
if [ "${PART:-1}" = 1 ]; then
  suite_and_bench "BwdSm90Graph|BwdSm90Pdl|BwdSm90Dq2"
else
  # REST (a file of gtest names joined by ':'): tests a cut shard of PART=1 did not reach, run while
  # pip builds the package (the GPU is otherwise idle then); waited for before pytest and peers.
  if [ -n "${REST:-}" ] && [ -f "$REST" ]; then
    (DASH_TEST_WATCHDOG_S=60 timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter="$(cat "$REST")" > "$O/gpu-rest.log" 2>&1;
     echo "rest rc $?" >> "$O/gpu-rest.log") &
    rest_pid=$!
  fi
  pip_bg
  pip_wait
  if [ -n "${rest_pid:-}" ]; then
    wait "$rest_pid"; echo "== rest of shard 0 $(el): $(grep -E '^\[  (PASSED|FAILED)|^rest rc' "$O/gpu-rest.log" | tr '\n' ' ')"
    grep -E "^\[  FAILED" "$O/gpu-rest.log" | head
  fi
  PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
