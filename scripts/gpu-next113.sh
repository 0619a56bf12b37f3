#!/usr/bin/env bash
# GPU machine (forty-third session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests). next112 (docs/perf.md
# v44 item 2): the causal hdim 128 80-row two-buffer tile ("c80": DASH_BWD_SM90_D128_CAUSAL_BM80=1 DASH_BWD_SM90_BLOCK_M=80
# DASH_BWD_SM90_DQ2=1) issues cuDNN's GMMA count per TFLOP (0.977), but descending on it ran head blocks of 16
# (default_head_block keeps 8 for 64 rows only) and read 1.9x the DRAM bytes of the 64-row run; sustained 0.97-0.98.
# Here: c80 with DASH_HEAD_BLOCK=8 ("c80h8") for descending, beside def and c80 (spt), ncu DRAM of c80h8 at 16k,
# then `bench --sustain 2` causal 8k / 16k, 3 interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next113
C80="DASH_BWD_SM90_D128_CAUSAL_BM80=1 DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1"
envs() { case $1 in def) ;; c80) echo $C80 ;; c80h8) echo $C80 DASH_HEAD_BLOCK=8 ;; c80h4) echo $C80 DASH_HEAD_BLOCK=4 ;; esac; }

main() {
  cat "$O/machine.txt"
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
  for cfg in c80h8 c80h4; do
    env $(envs $cfg) timeout -k 5 120 "$NCU" --clock-control none --metrics "$M" \
      --kernel-name regex:'attn_bwd_(sm90_)?main' --launch-skip 1 --launch-count 1 --csv bins/new/dash-attn bench --hdim 128 \
      --causal 1 --seqlen 16384 --schedules descending --reps 1 > "$O/ncu-dash-c1-s16384-$cfg.csv" 2>&1 || echo "ncu $cfg rc $?"
  done
  cp docs/data/s43-h100/next112/ncu-*.csv "$O/" 2>/dev/null
  python3 scripts/ncu_per_flop.py "$O"/ncu-*.csv; echo "ncu done $(el)"; save
  for r in 1 2 3; do
    for cfg in def c80 c80h8; do
      sch=descending,spt; [ $cfg = c80h8 ] && sch=descending
      env $(envs $cfg) timeout -k 5 150 bins/new/dash-attn bench --hdim 128 --causal 1 \
        --seqlen 8192,16384 --schedules $sch --reps 3 --sustain 2 --json "$O/sus-$cfg-r$r.json" \
        > "$O/sus-$cfg-r$r.log" 2>&1 || echo "bench $cfg r$r rc $?"
    done
    echo "round $r $(el)"; save
  done
  L() { echo "$O/sus-$1-r1.json,$O/sus-$1-r2.json,$O/sus-$1-r3.json"; }
  python3 scripts/sustain_ab.py "$(L def)" "$(L c80)" "$(L c80h8)"
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
mkdir -p "$DEST"; tar czf "$DEST/part1.tgz" -C "$O" . && cp "$O/run.log" "$DEST/"
