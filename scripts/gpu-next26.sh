#!/usr/bin/env bash
# GPU machine (written in the nineteenth session for the next one), two calls of about 5 minutes.
# Prebuilt binaries as in gpu-next20.sh (bins.tgz with bins/new/{dash-attn,dash_gpu_tests}; when
# the tree plus .snap passes 64 MiB, carry a .snap with only scripts/ and bins.tgz, as for
# gpu-next25.sh). Everything goes into $OUT/all.tgz.
#   PART=1: the whole GPU suite in 4 shards with the sanitizers at HEAD (the forward's split K/V
#           release at hdim 64 full and the 176-key draft's kernels are new since the last whole-
#           suite run; nothing building alongside), then `dash-attn bench` of every schedule and
#           auto at both head dims (auto's head_dim 64 long-full rule in the standard sweep);
#   PART=2: pip install + pytest, then the peers benchmark (PEERS_BUDGET_S 300: all 24 points) for the
#           README table with the head_dim 64 long-full rule.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next26
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  TEST_FILTER='*' LIMIT_S=${LIMIT_S:-240} bash scripts/gpu-bwd-tests.sh "$O"
  echo "== bench $(el)"
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json | grep -E " auto "
else
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
