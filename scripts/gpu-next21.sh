#!/usr/bin/env bash
# GPU machine (nineteenth session), prebuilt binaries as in gpu-next20.sh (bins.tgz; carry [".snap"]).
# Everything goes into $OUT/all.tgz.
#   PART=1: BwdSm90Producer24.EightyRowTilesBitwiseEqualToTheDefaultSplit with the head_dim 128 causal
#           80-row draft on and off (it failed at 2bcdea0 with the draft on: its two sides ran
#           different tile heights; the test now pins the draft off), then pip install + pytest + the
#           peers benchmark (PEERS_BUDGET_S, 300 by default here: every shape of the sweep) with the
#           short-causal planner rule (auto's first peers run with it);
#   PART=2: ncu of the 80-row shift at hdim 128 full 8k, ordered / unordered (gpu-next20.sh PART=3).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
if [ "${PART:-1}" = 2 ]; then PART=3 exec bash scripts/gpu-next20.sh; fi
. scripts/gpu-common.sh
gpu_setup gpu-next21
{
if [ "${PART:-1}" = 1 ]; then
  for e in 1 0; do
    echo "== Producer24 test, DASH_BWD_SM90_D128_CAUSAL_BM80=$e $(el)"
    DASH_BWD_SM90_D128_CAUSAL_BM80=$e timeout -k 5 120 bins/new/dash_gpu_tests \
      --gtest_filter='BwdSm90Producer24.*:BwdSm90TileRule.*' > "$O/p24-draft$e.log" 2>&1
    echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/p24-draft$e.log" | tr '\n' ' ')"
  done
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
