#!/usr/bin/env bash
# GPU machine (thirtieth session). .snap/bins.txz: bins/new/dash-attn = HEAD, bins/trace/dash-attn = HEAD
# built with -DDASH_BWD_TRACE=ON.
#   PART=1: the per-side timeline of shift with the group take (default) and with the drain
#          (DASH_BWD_GROUP_TAKE=0): hdim 128 full shift 1k / 4k, causal symmetric shift 1k; scripts/bwd_trace.py;
#          then `dash-attn bench` of hdim 64 full 512 / 1k, every schedule and auto, 2 rounds (auto's pick
#          moved to shift at 512 with the planner's group take).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next80
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/trace"
  for cfg in "128 0 shift 1024" "128 0 shift 4096" "128 1 symmetric_shift 1024"; do
    set -- $cfg
    for g in 1 0; do
      n=d$1-c$2-$3-$4-take$g
      DASH_BWD_GROUP_TAKE=$g DASH_BWD_TRACE_FILE="$O/trace/$n.csv" timeout -k 5 60 bins/trace/dash-attn bench --hdim $1 \
        --causal $2 --seqlen $4 --schedules $3 --reps 3 > "$O/trace/$n.log" 2>&1 || echo "$n rc $?"
    done
  done
  python3 scripts/bwd_trace.py "$O"/trace/*.csv
  gzip -9 "$O"/trace/*.csv
  echo "== bench $(el)"
  for r in 1 2; do
    timeout -k 5 60 bins/new/dash-attn bench --hdim 64 --causal 0 --seqlen 512,1024 \
      --schedules ascending,spt,descending,shift,atomic,auto --json "$O/auto64-r$r.json" > "$O/auto64-r$r.log" 2>&1 || echo "bench r$r rc $?"
  done
  python3 scripts/bench_rows.py "$O"/auto64-r*.json
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
