#!/usr/bin/env bash
# GPU machine (twenty-ninth session, first call). Everything goes into $OUT/all.tgz. .snap: bins/new = HEAD.
#   PART=1: the package's pip install in the background; meanwhile `auto` with the head_dim 64 shift
#          rule from 8192 keys (gpu-next70.sh PART=1: hdim 64 full 4k / 8k / 16k, 3 interleaved rounds)
#          and `dash-attn bench` of the probe's shapes; then bench/probes/peers_gap.py (why peers reads
#          our backward below the CLI: backward after backward / after a forward / after a forward and
#          a GPU spin / after a forward and an L2 flush, dash and cuDNN), SM clock and power sampled.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next71
{
if [ "${PART:-1}" = 1 ]; then

  pip_bg
  mkdir -p "$O/auto" "$O/gap"
  for r in 1 2 3; do
    order=$([ $((r % 2)) = 1 ] && echo auto,shift,descending,ascending || echo shift,descending,ascending,auto)
    timeout -k 5 120 bins/new/dash-attn bench --hdim 64 --causal 0 --seqlen 4096,8192,16384 --schedules $order \
      --json "$O/auto/auto-d64-full-r$r.json" > "$O/auto/r$r.log" 2>&1 || echo "bench r$r rc $?"
  done
  python3 scripts/auto_sweep.py "$O"/auto/*.json
  echo "auto done $(el)"
  pip_wait
  timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 1 --seqlen 16384 --schedules descending > "$O/gap/cli.log" 2>&1
  timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 4096,16384 --schedules shift >> "$O/gap/cli.log" 2>&1
  cat "$O/gap/cli.log"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 100 > "$O/gap/smi.csv" 2>&1 &
  SMI=$!
  (cd /tmp && timeout -k 5 240 python "$OLDPWD/bench/probes/peers_gap.py" --json "$O/gap/gap.json" 2>&1 | tee "$O/gap/gap.log" | grep -v Warning)
  kill $SMI
  echo "gap done $(el)"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
