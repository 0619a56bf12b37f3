#!/usr/bin/env bash
# GPU machine (thirty-fourth session). .snap: bins/new = HEAD (dash_gpu_tests).
#   PART=1: the whole GPU suite at HEAD (6 shards, LIMIT_S each, default 300) with memcheck / racecheck /
#           synccheck of the Sanitize tests alongside (scripts/gpu-bwd-tests.sh): the completion queue's
#           defaults, the causal-shift amendment and the DASH_BWD_QUEUE_DIAG switch on the GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next97
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  SHARDS=6 TEST_FILTER='*' LIMIT_S=${LIMIT_S:-300} bash scripts/gpu-bwd-tests.sh "$O"
  echo "suite rc $? $(el)"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
