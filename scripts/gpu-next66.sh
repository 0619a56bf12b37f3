#!/usr/bin/env bash
# GPU machine (twenty-eighth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD): the whole GPU suite in 6 shards with the sanitizers (ea9232a's
#          kernel helper mends were compile-checked only), then the auto-early draft: its tests and
#          the A/B of gpu-next65.sh PART=2 (auto against the explicit shift row at few-task shapes).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next66
{
if [ "${PART:-1}" = 1 ]; then
  echo "== suite $(el)"
  SHARDS=6 TEST_FILTER='*' LIMIT_S=330 bash scripts/gpu-bwd-tests.sh "$O"
  echo "== auto early $(el)"
  mkdir -p "$O/next65"; PART=2 OUT="$O/next65" bash scripts/gpu-next65.sh > "$O/next65.log" 2>&1
  tail -30 "$O/next65.log"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
