#!/usr/bin/env bash
# GPU machine (thirty-fourth session). .snap/bins.txz: bins/new (HEAD), bins/trace/dash-attn (HEAD with
# -DDASH_BWD_TRACE=ON). Everything into $OUT/all.tgz.
#   PART=1: why the completion queue costs hdim 128 full ascending / descending 13-25% at 4k-8k (next94: the late
#           append does not remove it at 8k). A/B with 2 post SMs, ROUNDS (2) interleaved rounds, of: no queue, the
#           queue, the queue + late append, and DASH_BWD_QUEUE_DIAG=1 with each append (the writers append, the
#           postprocess ignores the queue): is it the writers' append or the blocks' order? Then the main kernel's
#           timeline (trace build) at full ascending 8k without / with the queue / diag.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next95
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  cfg_env() {
    case $1 in
      off) echo "DASH_BWD_POST_QUEUE=0" ;;
      early) echo "DASH_BWD_POST_QUEUE=1" ;;
      late) echo "DASH_BWD_POST_QUEUE=1 DASH_BWD_QUEUE_LATE_APPEND=1" ;;
      diag) echo "DASH_BWD_POST_QUEUE=1 DASH_BWD_QUEUE_DIAG=1" ;;
      diaglate) echo "DASH_BWD_POST_QUEUE=1 DASH_BWD_QUEUE_DIAG=1 DASH_BWD_QUEUE_LATE_APPEND=1" ;;
    esac
  }
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for cfg in off early late diag diaglate; do
      env $(cfg_env $cfg) DASH_BWD_POST_SMS=2 timeout -k 5 90 bins/new/dash-attn bench --hdim 128 --causal 0 \
        --seqlen 4096,8192 --schedules ascending,descending,shift --json "$O/ab-$cfg-r$r.json" > /dev/null 2>&1 \
        || echo "bench $cfg r$r rc $?"
    done
    echo "round $r done $(el)"
  done
  echo "hdim 128 full, 2 post SMs"; python3 scripts/env_ab_table.py "$O" off early late diag diaglate
  mkdir -p "$O/trace"
  for cfg in off early diag late; do
    for sc in ascending shift; do
      env $(cfg_env $cfg) DASH_BWD_POST_SMS=2 DASH_BWD_TRACE_FILE="$O/trace/$cfg-$sc-8192.csv" timeout -k 5 60 \
        bins/trace/dash-attn bench --hdim 128 --causal 0 --seqlen 8192 --schedules $sc --reps 3 \
        > "$O/trace/$cfg-$sc.log" 2>&1 || echo "trace $cfg $sc rc $?"
      echo "trace $cfg $sc: $(grep -E "^128 +full +8192" "$O/trace/$cfg-$sc.log" | head -1)"
    done
  done
  python3 scripts/bwd_trace.py "$O"/trace/*.csv
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
