#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked; torch on the machine): the head_dim 64 forward, our weakest
#          point against cuDNN (0.87-0.94 in peers, 0.90-0.98 kernel-alone): ncu of ours (full 8k,
#          randn-like data, with the source page and stall summary) and of cuDNN's fprop (launch
#          shape: threads, registers, shared memory; tensor pipe, issue).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next45
KEYS="Duration|SM Frequency|Compute \(SM\) Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Registers Per|Dynamic Shared|Grid Size|Block Size|Achieved Occupancy|Issue Slots Busy|No Eligible|Executed Ipc A|hmma|per_second"
NCU_M="--metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum"
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/ncu"
  echo "== cudnn fprop hdim 64 $(el)"
  timeout -k 5 150 ncu --clock-control none --profile-from-start off --kernel-name regex:fprop --set full $NCU_M -f -o "$O/ncu/cudnn64" \
    python scripts/cudnn_profile.py --hdim 64 --seqlen 8192 > "$O/ncu/cudnn64.log" 2>&1; echo "rc $?"
  ncu --import "$O/ncu/cudnn64.ncu-rep" --page details > "$O/ncu/cudnn64.txt" 2>&1
  grep -E "^  [a-zA-Z_].*\(|$KEYS|xu|inst_executed" "$O/ncu/cudnn64.txt" | head -30
  echo "== our forward hdim 64 $(el)"
  timeout -k 5 120 ncu --clock-control none --set full $NCU_M --kernel-name regex:'attn_fwd' --launch-skip 1 --launch-count 1 \
    -f -o "$O/ncu/fwd64" bins/new/dash-attn bench --hdim 64 --causal 0 --seqlen 8192 --schedules atomic --reps 1 --dist normal \
    > "$O/ncu/fwd64.log" 2>&1; echo "rc $?"
  ncu --import "$O/ncu/fwd64.ncu-rep" --page details > "$O/ncu/fwd64.txt" 2>&1
  ncu --import "$O/ncu/fwd64.ncu-rep" --page source --csv --print-source sass > "$O/ncu/fwd64-sass.csv" 2>/dev/null
  grep -E "^  [a-zA-Z_].*\(|$KEYS|xu|inst_executed" "$O/ncu/fwd64.txt" | head -30
  python3 scripts/ncu_stalls.py "$O/ncu/fwd64-sass.csv" --top 30 > "$O/ncu/fwd64-stalls.txt" 2>&1; head -75 "$O/ncu/fwd64-stalls.txt"
  rm -f "$O"/ncu/*.ncu-rep
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
