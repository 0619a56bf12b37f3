#!/usr/bin/env bash
# GPU machine (thirty-fifth session). .snap/bins.txz: bins/new (HEAD release build). Everything into $OUT/all.tgz.
#   PART=1: the head interleave across the sweep (next99: DASH_HEAD_BLOCK=8 gained 1.1-1.7% at hdim 128 full 8k and
#           causal 16k, lost 0.9% at hdim 64 causal 16k). A/B of 16 (the default) / 8 / 4, ROUNDS (3) interleaved
#           rounds, ascending / descending / auto at 2k-16k, hdim 128 and 64, full and causal.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next100
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  for r in $(seq 1 "${ROUNDS:-3}"); do
    ab_round "$r" hb16 hb8 hb4
    echo "round $r done $(el)"
  done
  python3 scripts/env_ab_table.py "$O" hb16 hb8 hb4
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
