#!/usr/bin/env bash
# GPU machine (twenty-eighth session): the final checks. Everything goes into $OUT/all.tgz.
#   .snap: bins/new = HEAD.
#   PART=1: the whole GPU suite in 6 shards with the sanitizers, then `dash-attn bench` of every
#          schedule and auto (the defaults, hdim 128 and 64, both masks).
#   PART=2: the package from HEAD, the Python suite, then peers (3 rounds, the standard sweep).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next69
{
if [ "${PART:-1}" = 1 ]; then
  suite_and_bench '(EnvSwitches|BwdSm90Auto|LastWaveSplit)'
fi
if [ "${PART:-1}" = 2 ]; then
  install_head || exit 1
  pytest_and_peers
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
