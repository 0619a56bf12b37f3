#!/usr/bin/env bash
# GPU machine (twenty-ninth session). .snap/bins.txz: bins/trace/dash-attn = HEAD (the 16-byte dK / dV
# epilogue) built with -DDASH_BWD_TRACE=ON (there the 80-row one-buffer kernel now compiles without spills).
#   PART=1: the per-side timeline after the epilogue change (gpu-next74.sh's shapes, fewer): hdim 128 full
#          shift / descending (the default one-buffer 80-row kernel) / causal descending at 1k and 4k,
#          hdim 64 full descending 1k; scripts/bwd_trace.py on each.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next77
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/trace"
  for cfg in "128 0 shift" "128 0 descending" "128 1 descending" "64 0 descending"; do
    set -- $cfg
    for s in 1024 4096; do
      [ $1 = 64 ] && [ $s = 4096 ] && continue
      n=d$1-c$2-$3-$s
      DASH_BWD_TRACE_FILE="$O/trace/$n.csv" timeout -k 5 60 bins/trace/dash-attn bench --hdim $1 --causal $2 \
        --seqlen $s --schedules $3 --reps 3 > "$O/trace/$n.log" 2>&1 || echo "$n rc $?"
    done
  done
  python3 scripts/bwd_trace.py "$O"/trace/*.csv
  gzip -9 "$O"/trace/*.csv
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
