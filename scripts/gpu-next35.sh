#!/usr/bin/env bash
# GPU machine (written in the twenty-first session for the next one), two calls of about 5-7
# minutes. Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked as in gpu-next28.sh): the whole GPU suite at HEAD in 6 shards
#          with the sanitizers, now with PDL and the polling postprocess on by default (df48563;
#          the suite has run with PDL on, the polling postprocess only in BwdSm90Pdl and the
#          determinism / first-store tests), including BwdSm90Graph (a captured backward replayed:
#          written, never run); then `dash-attn bench` of every schedule;
#   PART=2 (from the repository root: `tar xzf .snap/bins.tgz && PART=2 bash scripts/gpu-next35.sh`):
#          pip install + pytest, then the peers benchmark (all 24 points) for the README table
#          (the ef0214e table predates PDL and the polling postprocess).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next35
unset DASH_BWD_DQ_FIRST_STORE DASH_BWD_PDL DASH_BWD_POST_POLL
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  SHARDS=${SHARDS:-6} TEST_FILTER='*' LIMIT_S=${LIMIT_S:-320} bash scripts/gpu-bwd-tests.sh "$O"
  grep -h -E "BwdSm90Graph|BwdSm90Pdl" "$O"/gpu-shard*.log | grep -E "OK|FAILED" | head -4
  echo "== bench $(el)"
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json | grep -E " auto "
else
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
