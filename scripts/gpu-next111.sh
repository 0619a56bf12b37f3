#!/usr/bin/env bash
# GPU machine (forty-second session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests), copied to
# the repository root first; head.tgz (the package's sources) is made here from the working tree if absent. Branches on the GPU it finds:
#   H200 (the GPU the issue's targets are written for; none came in sessions 29-41): the peers sweep,
#        head dims HDIMS (default "128", then a second call with HDIMS=64), from the package of head.tgz
#        (pip once per machine: a warm machine's /tmp/h install is reused).
#   otherwise (H100): what the main backward kernel does per FLOP against cuDNN's bprop kernel, by ncu
#        counters (DRAM bytes, L2 bytes, instructions, shared-memory wavefronts, tensor-pipe activity where the
#        metric exists on this ncu), at hdim 128 causal 16k and full 8k: ours with `auto` (descending / shift)
#        and symmetric_shift, cuDNN through scripts/cudnn_profile.py; then `bench --sustain 2` at causal 8k / 16k
#        of descending and symmetric shift, defaults against DASH_BWD_POST_SMS=4 (ps4), 2 interleaved rounds.
#        docs/perf.md v43.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next111
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)

h200_peers() {
  cat "$O/machine.txt"
  R=/tmp/h
  if [ -d "$R" ] && (cd /tmp && python -c "import dash_attn" 2>/dev/null); then
    echo "package already installed on this machine $(el)"
  else
    [ -f head.tgz ] || { tar czf /tmp/head.tgz --exclude=./docs/data --exclude=./bins --exclude=./.snap --exclude='./*.txz' . && mv /tmp/head.tgz head.tgz; }
    head_pip_bg || return 1
    pip_wait; echo "pip done $(el)"
  fi
  run_pytest() { echo "pytest not run in this call"; }
  PEERS_EXTRA="--hdims ${HDIMS:-128}" PEERS_TIMEOUT=${PEERS_TIMEOUT:-400} PEERS_BUDGET=${PEERS_BUDGET:-330} \
    PYTEST_LAST=1 pytest_and_peers
  echo "total $(el)"
}

h100_counters() {
  cat "$O/machine.txt"
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  [ -n "$NCU" ] || { echo "no ncu"; return 1; }
  # Only metrics this ncu knows (an unknown one fails the whole run).
  "$NCU" --query-metrics --chip gh100 > "$O/metrics-gh100.txt" 2>&1
  M=""
  for m in dram__bytes_read.sum dram__bytes_write.sum lts__t_bytes.sum lts__t_sector_hit_rate.pct \
           smsp__inst_executed.sum l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
           sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
           sm__inst_executed_pipe_tensor_op_gmma.sum sm__cycles_elapsed.avg.per_second gpu__time_duration.sum \
           smsp__inst_executed_op_shared_ld.sum smsp__inst_executed_op_shared_st.sum sm__warps_active.avg.per_cycle_active; do
    grep -qw "${m%%.*}" "$O/metrics-gh100.txt" && M="$M${M:+,}$m" || echo "metric not on this ncu: $m"
  done
  [ -n "$M" ] || M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
  echo "metrics: $M"
  # ours then cuDNN's per shape (the causal 16k pair first), then causal 16k symmetric shift
  for shape in "1 16384 auto" "0 8192 auto" "1 16384 symmetric_shift"; do
    set -- $shape
    timeout -k 5 120 "$NCU" --clock-control none --metrics "$M" --kernel-name regex:'attn_bwd_(sm90_)?main' \
      --launch-skip 1 --launch-count 1 --csv bins/new/dash-attn bench --hdim 128 --causal $1 --seqlen $2 \
      --schedules $3 --reps 1 > "$O/ncu-dash-c$1-s$2-$3.csv" 2>&1 || echo "ncu dash $shape rc $?"
    echo "dash $shape done $(el)"; save
    [ "$3" = auto ] || continue
    timeout -k 5 150 "$NCU" --clock-control none --profile-from-start off --metrics "$M" --kernel-name regex:'bprop' \
      --csv python scripts/cudnn_profile.py --hdim 128 --seqlen $2 $([ "$1" = 1 ] && echo --causal) \
      > "$O/ncu-cudnn-c$1-s$2.csv" 2>&1 || echo "ncu cudnn $shape rc $?"
    echo "cudnn $shape done $(el)"; save
  done
  python3 scripts/ncu_per_flop.py "$O"/ncu-*.csv; save
  # At the cap: causal symmetric shift with its partial group's 4 SMs given to the postprocess (ps4,
  # DASH_BWD_POST_SMS=4; v32 item 4 measured it in short runs only) against the defaults, interleaved.
  cfg_env() { [ "$1" = ps4 ] && echo DASH_BWD_POST_SMS=4; }
  sustain_rounds 2 "def ps4" --hdim 128 --causal 1 --seqlen 8192,16384 --schedules descending,symmetric_shift --reps 3
  echo "total $(el)"
}

case "$GPU" in
  *H200*) h200_peers 2>&1 | tee "$O/run.log" ;;
  *) h100_counters 2>&1 | tee "$O/run.log" ;;
esac
mkdir -p "$DEST"
tar czf "$DEST/part1.tgz" -C "$O" . && cp "$O/run.log" "$DEST/" && { [ -f "$O/peers.json" ] && cp "$O/peers.json" "$O/table.md" "$O/peers.png" "$DEST/" || true; }
