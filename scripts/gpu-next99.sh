#!/usr/bin/env bash
# GPU machine (thirty-fifth session). .snap/bins.txz: bins/new (HEAD release build). Everything into $OUT/all.tgz.
#   PART=1: does a narrower head interleave steady ascending / descending at the long lengths (the 16k rows spread
#           3-18% between rounds; docs/perf.md v35: a convoy along the dQ chains that starts in some launches)?
#           A/B of DASH_HEAD_BLOCK = 16 (the default) / 8 / 4 / 32, ROUNDS (3) interleaved rounds: hdim 64 causal
#           16k descending, hdim 128 causal 16k descending, hdim 128 full 8k ascending / descending.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next99
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  for r in $(seq 1 "${ROUNDS:-3}"); do
    for cfg in hb16 hb8 hb4 hb32; do
      e=$(ab_cmd $cfg)
      timeout -k 5 90 $e bench --hdim 64 --causal 1 --seqlen 16384 --schedules descending \
        --json "$O/ab-$cfg-d64c-r$r.json" > /dev/null 2>&1 || echo "bench $cfg d64c r$r rc $?"
      timeout -k 5 90 $e bench --hdim 128 --causal 1 --seqlen 16384 --schedules descending \
        --json "$O/ab-$cfg-d128c-r$r.json" > /dev/null 2>&1 || echo "bench $cfg d128c r$r rc $?"
      timeout -k 5 90 $e bench --hdim 128 --causal 0 --seqlen 8192 \
        --schedules ascending,descending --json "$O/ab-$cfg-d128f-r$r.json" > /dev/null 2>&1 || echo "bench $cfg d128f r$r rc $?"
    done
    echo "round $r done $(el)"
  done
  python3 scripts/env_ab_table.py "$O" hb16 hb8 hb4 hb32 --spread
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
