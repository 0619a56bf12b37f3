#!/usr/bin/env bash
# GPU machine (thirty-third session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests); head.tgz = `git archive HEAD`.
#   PART=1: the whole GPU suite (6 shards, sanitizers) with the defaults, then `dash-attn bench` of every schedule.
#   PART=2: the package, `pytest tests/python`, peers (3 rounds; PEERS_ARGS to narrow it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next93
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  suite_and_bench "BwdSm90PostQueue|BwdSm90Pdl|BwdSm90PostSms|BwdSm90Auto"
fi
if [ "${PART:-1}" = 2 ]; then
  head_pip_bg || exit 1
  pip_wait; echo "pip done $(el)"
  PEERS_TIMEOUT=${PEERS_TIMEOUT:-330} PEERS_BUDGET=${PEERS_BUDGET:-300} pytest_and_peers
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
