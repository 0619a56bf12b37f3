#!/usr/bin/env bash
# GPU machine (twenty-sixth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD's default build): `auto` away from the standard sweep: GQA, odd
#     lengths, batch x heads that fill whole waves, few heads; every deterministic schedule, atomic and
#     auto per shape, 2 interleaved rounds (scripts/auto_sweep.py: auto / best per point). SUBSET=rules: below.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next57
# tag hdim batch heads kv_heads seqlens
SHAPES=(
  "d128-2x32g8 128 2 32 8 1000,4096,8192"
  "d128-1x33 128 1 33 33 2048,8192"
  "d128-4x12 128 4 12 12 3000"
  "d128-1x16 128 1 16 16 12000"
  "d128-1x4 128 1 4 4 8192,16384"
  "d128-16x16 128 16 16 16 1000"
  "d64-2x64g8 64 2 64 8 1000,4096,8192"
  "d64-1x66 64 1 66 66 2048,8192"
  "d64-4x24 64 4 24 24 3000"
  "d64-1x32 64 1 32 32 12000"
  "d64-1x8 64 1 8 8 8192,16384"
)
# SUBSET=rules (gpu-next61, after the three rule changes): the shapes the changed rules touch, plus
# hdim 128 full 6000 (47 KV tiles: the ascending rule's range away from 4096).
if [ "${SUBSET:-}" = rules ]; then
  SHAPES=(
    "d128-2x32g8 128 2 32 8 1000,4096,8192"
    "d128-1x33 128 1 33 33 8192"
    "d128-2x16 128 2 16 16 6000"
    "d128-4x12 128 4 12 12 3000"
    "d64-2x64g8 64 2 64 8 1000"
  )
fi
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/auto"
  for r in 1 2; do
    echo "== round $r $(el)"
    for sh in "${SHAPES[@]}"; do
      set -- $sh
      timeout -k 5 90 bins/new/dash-attn bench --hdim $2 --causal 0,1 --seqlen $6 --batch $3 --heads $4 --kv-heads $5 \
        --schedules ascending,spt,descending,shift,symmetric_shift,atomic,auto --reps 5 \
        --json "$O/auto/auto-$1-r$r.json" > "$O/auto/auto-$1-r$r.log" 2>&1 || echo "bench $1 r$r rc $?"
    done
  done
  python3 scripts/auto_sweep.py "$O"/auto/*.json
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
