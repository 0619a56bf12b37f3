#!/usr/bin/env bash
# GPU machine (thirty-fifth session). .snap/bins.txz: bins/new (HEAD: the head block 8 rule for long ordered runs,
# schedule.h default_head_block), bins/old/dash-attn (the build before it). Everything into $OUT/all.tgz.
#   PART=1: A/B old / new binary, ROUNDS (2) interleaved rounds, ascending / descending / auto at 2k-16k, hdim 128
#           and 64, full and causal (auto's picks and their speed with the new rule); then the GPU tests of the
#           task order, determinism and accuracy (6 shards).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next101
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  for r in $(seq 1 "${ROUNDS:-2}"); do
    ab_round "$r" old new
    echo "round $r done $(el)"
  done
  python3 scripts/env_ab_table.py "$O" old new
  SHARDS=6 TEST_FILTER='*Determinism*:*Accuracy*:BwdSm90HeadBlock*:BwdSm90Auto*:BwdSm90TileRule*' LIMIT_S=${TEST_LIMIT_S:-150} \
    bash scripts/gpu-bwd-tests.sh "$O"; echo "tests rc $? $(el)"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
