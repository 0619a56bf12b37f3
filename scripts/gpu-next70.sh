#!/usr/bin/env bash
# GPU machine (written in the twenty-eighth session for the next one's first call). Everything goes into
# $OUT/all.tgz. .snap: bins/new = HEAD.
#   PART=1: `auto` with the head_dim 64 shift rule from 8192 keys (plan::kShiftLongFullTilesHd64, written
#          after the twenty-eighth session's last device call): hdim 64 full 4k / 8k / 16k, shift,
#          descending, ascending and auto, 3 interleaved rounds (auto first in rounds 1 and 3), then
#          auto's pick and its time against the best row (scripts/auto_sweep.py).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next70
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/auto"
  for r in 1 2 3; do
    order=$([ $((r % 2)) = 1 ] && echo auto,shift,descending,ascending || echo shift,descending,ascending,auto)
    timeout -k 5 120 bins/new/dash-attn bench --hdim 64 --causal 0 --seqlen 4096,8192,16384 --schedules $order \
      --json "$O/auto/auto-d64-full-r$r.json" > "$O/auto/r$r.log" 2>&1 || echo "bench r$r rc $?"
  done
  python3 scripts/auto_sweep.py "$O"/auto/*.json
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
