#!/usr/bin/env bash
# GPU machine (written in the twentieth session for the next one), two calls of about 5-7 minutes,
# from the repository root with bins/ unpacked (`tar xzf .snap/bins.tgz`; .snap with bins.tgz as in
# gpu-next28.sh). Everything goes into $OUT/all.tgz.
#   PART=1: the whole GPU suite at HEAD in 6 shards (SHARDS; the 4 x 240 s of gpu-next27.sh were not
#           enough) with the sanitizers: the dQ first store (3c5c9de) has run only in its own test and
#           the determinism / accuracy tests so far; then `dash-attn bench` of every schedule;
#   PART=2: pip install + pytest, then the peers benchmark (all 24 points) for the README table with
#           the first store (the 8d47f07 table predates it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next32
unset DASH_BWD_DQ_FIRST_STORE
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  SHARDS=${SHARDS:-6} TEST_FILTER='*' LIMIT_S=${LIMIT_S:-300} bash scripts/gpu-bwd-tests.sh "$O"
  echo "== bench $(el)"
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json | grep -E " auto "
else
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
