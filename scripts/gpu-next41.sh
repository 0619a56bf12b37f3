#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked; torch on the machine, no pip): what the kernels do against
#          cuDNN's, at hdim 128 full 8k (16k tokens), randn-like data:
#          (a) ncu of cuDNN SDPA's forward and backward kernels (scripts/cudnn_profile.py): names,
#              launch shapes, tensor pipe, L2 / DRAM, stall reasons;
#          (b) ncu of our forward (`dash-attn bench --dist normal`), with its source page;
#          (c) ncu of the default shift (two dQ buffers) ordered and unordered, with the phases.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next41
KEYS="Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|L2 Hit Rate|DRAM Throughput|Registers Per|Shared Memory Config|Dynamic Shared|Grid Size|Block Size|Cluster Size|Achieved Occupancy|Issue Slots Busy|No Eligible|Executed Ipc A"
NCU_M="--metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_hmma.sum,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second"
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/ncu"
  echo "== cudnn $(el)"
  timeout -k 5 200 ncu --clock-control none --profile-from-start off --set full $NCU_M -f -o "$O/ncu/cudnn" \
    python scripts/cudnn_profile.py --hdim 128 --seqlen 8192 > "$O/ncu/cudnn.log" 2>&1
  echo "cudnn ncu rc $?"; tail -3 "$O/ncu/cudnn.log"
  ncu --import "$O/ncu/cudnn.ncu-rep" --page details > "$O/ncu/cudnn.txt" 2>&1
  ncu --import "$O/ncu/cudnn.ncu-rep" --page raw --csv --metrics launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second > "$O/ncu/cudnn-raw.csv" 2>&1
  grep -E "^  [a-zA-Z_].*\(|$KEYS|hmma|lts__t_bytes|per_second" "$O/ncu/cudnn.txt" | head -80
  echo "== our forward $(el)"
  timeout -k 5 120 ncu --clock-control none --set full $NCU_M --kernel-name regex:'attn_fwd' --launch-skip 1 --launch-count 1 \
    -f -o "$O/ncu/fwd" bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 8192 --schedules atomic --reps 1 --dist normal \
    > "$O/ncu/fwd.log" 2>&1; echo "fwd ncu rc $?"
  ncu --import "$O/ncu/fwd.ncu-rep" --page details > "$O/ncu/fwd.txt" 2>&1
  ncu --import "$O/ncu/fwd.ncu-rep" --page source --csv --print-source sass > "$O/ncu/fwd-sass.csv" 2>/dev/null
  grep -E "$KEYS|hmma|lts__t_bytes|per_second" "$O/ncu/fwd.txt" | head -30
  python3 scripts/ncu_stalls.py "$O/ncu/fwd-sass.csv" --top 25 > "$O/ncu/fwd-stalls.txt" 2>&1; head -60 "$O/ncu/fwd-stalls.txt"
  echo "== shift ordered / unordered $(el)"
  ncu_shift_ordered_unordered 128 8192
  for v in shift-ordered shift; do echo "-- $v"; grep -E "$KEYS" "$O/ncu/bwd-$v.txt" | head -16; done
  rm -f "$O"/ncu/*.ncu-rep
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
