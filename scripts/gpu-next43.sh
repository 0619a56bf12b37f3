#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked; torch on the machine, no pip): kernel-alone times of our
#          forward and backward (`auto`) against cuDNN SDPA's, each kernel timed by ncu
#          (serialised launches, same randn-like data: `dash-attn bench --dist normal`, torch.randn),
#          at hdim 128 full / causal 2k-16k and hdim 64 4k / 16k (scripts/kernel_pairs.py). A
#          measurement beside peers.py, whose implementations take turns over minutes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next43
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
{
if [ "${PART:-1}" = 1 ]; then
  for cfg in "128 2048,4096,8192,16384" "64 4096,16384"; do
    set -- $cfg; d=$1; sl=$2
    for c in 0 1; do
      echo "== hdim $d causal $c $(el)"
      cflag=""; [ $c = 1 ] && cflag="--causal"
      timeout -k 5 200 ncu --clock-control none --kernel-name regex:'attn_' --metrics $M --csv \
        bins/new/dash-attn bench --dist normal --hdim $d --causal $c --seqlen $sl --schedules auto --reps 1 \
        > "$O/ours-$d-$c.csv" 2> "$O/ours-$d-$c.err" || { echo "ours rc $?"; tail -3 "$O/ours-$d-$c.err"; }
      timeout -k 5 200 ncu --clock-control none --profile-from-start off --metrics $M --csv \
        python scripts/cudnn_profile.py --hdim $d --seqlen $sl $cflag \
        > "$O/cudnn-$d-$c.csv" 2> "$O/cudnn-$d-$c.err" || { echo "cudnn rc $?"; tail -3 "$O/cudnn-$d-$c.err"; }
      python3 scripts/kernel_pairs.py "$O/ours-$d-$c.csv" "$O/cudnn-$d-$c.csv" "hdim $d causal $c" $sl
      grep -E "^[0-9]+ +(full|causal)" "$O/ours-$d-$c.csv" | grep -v forward | head -8
    done
  done
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
