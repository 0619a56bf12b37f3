#!/usr/bin/env bash
# GPU machine, one call (seventeenth session): the 2e98720 defaults run as defaults, plus the two
# measurements the v17 notes asked for. Prebuilt binaries (bins.tgz: bins/new/{dash-attn,dash_gpu_tests};
# carry [".snap"], `cd .snap && bash scripts/gpu-s18a.sh`). Everything goes into $OUT/all.tgz.
# 1. the whole GPU suite in 4 shards with memcheck / racecheck / synccheck alongside;
# 2. two interleaved rounds of `dash-attn bench` (hdim 128 and 64, both masks, 512-16k):
#    def   : every schedule, the defaults (round 1 is the session's bench of the defaults);
#    b64   : every schedule on 64-row tiles (DASH_BWD_SM90_BLOCK_M=64; the split-rank kernel's
#            64-row sweep that the planner's visit-order penalty refit needs);
#    unord : shift / symmetric shift / descending with DASH_DEBUG_UNORDERED=1 (same tasks, same
#            order, no semaphore waits): separates shift's chain waits from its visit order.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-s18a-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SM90_PRODUCER24 DASH_BWD_SM90_FP16_BM80 DASH_BWD_SM90_D64_BM80 \
  DASH_BWD_SPLIT_RANK DASH_HEAD_BLOCK DASH_DEBUG_UNORDERED
[ -d bins ] || tar xzf bins.tgz
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$O/machine.txt" 2>&1
ALL=ascending,spt,descending,shift,symmetric_shift,atomic,auto
b() {  # b TAG ROUND SCHEDULES [ENV...]
  local tag=$1 r=$2 s=$3; shift 3
  for d in 128 64; do
    env "$@" timeout -k 5 90 bins/new/dash-attn bench --hdim $d --schedules "$s" \
      --json "$O/$tag-r$r-hdim$d.json" > "$O/$tag-r$r-hdim$d.log" 2>&1 || echo "bench $tag r$r hdim $d rc $?"
  done
}
{
echo "== tests $(el)"
TEST_FILTER='*' LIMIT_S=${LIMIT_S:-300} bash scripts/gpu-bwd-tests.sh "$O"
for r in 1 2; do
  echo "== round $r $(el)"
  b def $r $ALL
  b b64 $r $ALL DASH_BWD_SM90_BLOCK_M=64
  b unord $r shift,symmetric_shift,descending DASH_DEBUG_UNORDERED=1
done
echo "== defaults, round 1 (>= 1k)"
python3 scripts/bench_rows.py --min-seqlen 1024 "$O"/def-r1-hdim*.json | grep -E " (descending|atomic|auto) "
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
