#!/usr/bin/env bash
# GPU machine (twenty-ninth session). Everything goes into $OUT/all.tgz. .snap/bins.txz: bins/new/dash-attn
# (HEAD) and bins/trace/dash-attn (HEAD built with -DDASH_BWD_TRACE=ON: the main kernel's per-side
# timeline, src/kernels/sm90/bwd_trace.cuh; only kernels that compile without spills there are traced).
#   PART=1: where a side's time goes: DASH_BWD_TRACE_FILE timelines of the last launch of `dash-attn bench`
#          (3 reps) at hdim 128 full shift (two-buffer 80-row kernel) and descending with
#          DASH_BWD_SM90_DQ2=1, causal descending (64 rows), hdim 64 full / causal descending, 512-16k;
#          scripts/bwd_trace.py on each; the same rows on the release binary for the trace's cost.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next74
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/trace"
  run() {  # name hdim causal seqlen schedule [env...]
    local n=$1 d=$2 c=$3 s=$4 sc=$5; shift 5
    for b in trace new; do
      env "$@" DASH_BWD_TRACE_FILE=$([ $b = trace ] && echo "$O/trace/$n.csv") timeout -k 5 60 bins/$b/dash-attn bench \
        --hdim $d --causal $c --seqlen $s --schedules $sc --reps 3 > "$O/trace/$n-$b.log" 2>&1 || echo "$n $b rc $?"
      echo "$n $b: $(grep -E "^$d +(full|causal) +$s .*$sc" "$O/trace/$n-$b.log" | head -1)"
    done
  }
  for s in 512 1024 4096 16384; do
    run d128-full-shift-$s 128 0 $s shift
    run d128-full-desc-dq2-$s 128 0 $s descending DASH_BWD_SM90_DQ2=1
    run d128-causal-desc-$s 128 1 $s descending
    run d64-full-desc-$s 64 0 $s descending
  done
  run d64-causal-desc-4096 64 1 4096 descending
  run d128-full-atomic-dq2-4096 128 0 4096 atomic DASH_BWD_SM90_DQ2=1
  python3 scripts/bwd_trace.py "$O"/trace/*.csv
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
