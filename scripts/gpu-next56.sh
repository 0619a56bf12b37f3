#!/usr/bin/env bash
# GPU machine (twenty-sixth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD's default build, kShiftLongFull128ModelGap 0.10):
#     (a) `auto` on full masks at head_dim 128 8k whose KV tasks fill whole waves (2112 = 16 x 132:
#         batch x heads 1 x 33 and 3 x 11), where the model has shift 8.9% behind descending and the
#         0.08 tolerance gave descending (gpu-next55: 5.25 ms against atomic's 4.5-4.9): descending,
#         shift, atomic and auto, 2 interleaved rounds;
#     (b) the forward ncu stall phases at hdim 128 and 64 full 8k (profile-bwd.sh WHAT=fwd, now with
#         --reps 3: gpu-next55's --reps 1 profiled nothing).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next56
{
if [ "${PART:-1}" = 1 ]; then
  echo "== auto at 16-wave shapes $(el)"
  mkdir -p "$O/auto"
  for r in 1 2; do
    for bh in "1 33" "3 11"; do
      set -- $bh
      timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 8192 --batch $1 --heads $2 --kv-heads $2 \
        --schedules descending,shift,atomic,auto --reps 10 --json "$O/auto/b$1-h$2-r$r.json" > /dev/null 2>&1 || echo "bench $bh rc $?"
    done
  done
  python3 scripts/bench_rows.py "$O"/auto/*.json
  for d in 128 64; do fwd_stall_phases $d 0; done
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
