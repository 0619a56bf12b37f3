#!/usr/bin/env bash
# GPU machine (forty-third session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests), copied to the
# repository root first. The hdim 128 causal 80-row two-buffer tile (the DASH_BWD_SM90_D128_CAUSAL_BM80 draft with
# DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1: "c80") at the power cap. next111 (docs/perf.md v44) found our
# causal 64-row kernel issuing 1.14x cuDNN's GMMA instructions per TFLOP (full 8k on 80 rows: 0.98x) and drawing
# 4-5% more energy per cycle than cuDNN's at causal (v39), where the full-mask 80-row kernel draws the same; the
# draft measured 0.98-1.01x of 64 rows only at the boost clock (v29 item 2). Steps:
#   (1) its GPU tests (DASH_TEST_SM90_DRAFT=1 BwdSm90D128CausalDq2.*);
#   (2) ncu per TFLOP at causal 16k, descending on 64 rows against c80 (cuDNN's row from next111's csv);
#   (3) `bench --sustain 2` causal 4k / 8k / 16k, descending and spt, def against c80, 2 interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next112
C80="DASH_BWD_SM90_D128_CAUSAL_BM80=1 DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1"

main() {
  cat "$O/machine.txt"
  DASH_TEST_SM90_DRAFT=1 timeout -k 5 150 bins/new/dash_gpu_tests --gtest_filter='BwdSm90D128CausalDq2.*' > "$O/tests-causal-dq2.log" 2>&1
  echo "causal dq2 tests rc $? $(el)"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests-causal-dq2.log" | head -8; save
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,sm__warps_active.avg.per_cycle_active
  for cfg in descending desc80; do
    env $([ $cfg = desc80 ] && echo $C80) timeout -k 5 120 "$NCU" --clock-control none --metrics "$M" \
      --kernel-name regex:'attn_bwd_(sm90_)?main' --launch-skip 1 --launch-count 1 --csv bins/new/dash-attn bench --hdim 128 \
      --causal 1 --seqlen 16384 --schedules descending --reps 1 > "$O/ncu-dash-c1-s16384-$cfg.csv" 2>&1 || echo "ncu $cfg rc $?"
  done
  cp docs/data/s43-h100/next111/ncu-cudnn-c1-s16384.csv "$O/" 2>/dev/null
  python3 scripts/ncu_per_flop.py "$O"/ncu-*.csv; echo "ncu done $(el)"; save
  cfg_env() { [ "$1" = c80 ] && echo $C80; }
  sustain_rounds 2 "def c80" --hdim 128 --causal 1 --seqlen 4096,8192,16384 --schedules descending,spt --reps 3
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
mkdir -p "$DEST"; tar czf "$DEST/part1.tgz" -C "$O" . && cp "$O/run.log" "$DEST/"
