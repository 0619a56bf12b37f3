#!/usr/bin/env bash
# GPU machine (written in the thirty-fourth session for the next). .snap/bins.txz: bins/trace/dash-attn (HEAD built
# with -DDASH_BWD_TRACE=ON: the per-side timeline and the dQ chains' links, scripts/bwd_chain.py).
#   PART=1: are ascending / descending's chains in lockstep at the edge of their latency budget (docs/perf.md v35:
#           the queue's append started a convoy)? Timelines + chain links of one launch each: hdim 128 full
#           ascending 8k without / with the queue (DASH_BWD_POST_QUEUE=0 / =1, 2 post SMs), shift 8k, causal
#           descending 16k, and hdim 64 causal descending 16k three times (its rows spread 3-18% between rounds).
#           Summaries on the device; the chain CSVs of the first two kept (gzipped).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next98
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/trace"
  tr() {  # name hdim causal seqlen schedule [env...]
    local n=$1 d=$2 c=$3 s=$4 sc=$5; shift 5
    env "$@" DASH_BWD_TRACE_FILE="$O/trace/$n.csv" timeout -k 5 60 bins/trace/dash-attn bench --hdim $d --causal $c \
      --seqlen $s --schedules $sc --reps 3 > "$O/trace/$n.log" 2>&1 || echo "$n rc $?"
    python3 scripts/bwd_trace.py "$O/trace/$n.csv"; python3 scripts/bwd_chain.py "$O/trace/$n.csv.chain.csv"
  }
  tr asc8k-off 128 0 8192 ascending DASH_BWD_POST_QUEUE=0 DASH_BWD_POST_SMS=2
  tr asc8k-queue 128 0 8192 ascending DASH_BWD_POST_QUEUE=1 DASH_BWD_POST_SMS=2
  tr shift8k 128 0 8192 shift
  tr desc16k-causal 128 1 16384 descending
  for r in 1 2 3; do tr d64-desc16k-causal-$r 64 1 16384 descending; done
  gzip -9 "$O"/trace/*.csv
  rm -f "$O"/trace/shift8k.csv.chain.csv.gz "$O"/trace/desc16k*.chain.csv.gz "$O"/trace/d64-*.chain.csv.gz
  du -sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
