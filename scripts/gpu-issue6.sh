#!/usr/bin/env bash
# 2-GPU machine (run kind nvidia-h200-x2), issue 6 in one call (~7 min): install the package, then
#   1. the step-time A/B under DDP on 2 GPUs (examples/step_time_ab.py, one process per GPU,
#      attentions interleaved in blocks of 10 steps) with GPU 0's SM clock / power logged
#      (nvidia-smi, 100 ms) and joined per block (scripts/step_clocks_join.py);
#   2. the same on GPU 0 alone (one process);
#   3. examples/check_reproducible.sh without FSDP and without its own step A/B: the 1-GPU and
#      DDP dash pairs must be identical, the cuDNN pair must differ. (Reference hashes,
#      docs/training.md: 1 GPU `b6b8b5c0...` since fc7da02's exp2 change, run 10; DDP `f2090ef9...`
#      until then, not re-measured since.)
# Knobs: ATTNS (dash,dash_op,sdpa_cudnn,sdpa_detmode), BLOCKS (10), STEPS (60), CHECK_ARGS, CHECK_BUDGET_S (300).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-issue6-logs}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc) CUBLAS_WORKSPACE_CONFIG=:4096:8
t0=$(date +%s)
python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $? ($(( $(date +%s) - t0 ))s)"
ATTNS=${ATTNS:-dash,dash_op,sdpa_cudnn,sdpa_detmode}
ab() {  # name, then the launcher words
  local name=$1; shift
  nvidia-smi -i 0 --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader,nounits -lms 100 > "$OUT/clocks-$name.csv" 2>&1 &
  local smi=$!
  timeout -k 10 200 "$@" examples/step_time_ab.py --attns "$ATTNS" --blocks "${BLOCKS:-10}" --steps-per-block 10 \
    --json "$OUT/step-ab-$name.json" > "$OUT/step-ab-$name.log" 2>&1
  echo "$name step A/B rc $? ($(( $(date +%s) - t0 ))s)"; grep -E "^  [a-z_]+ +median" "$OUT/step-ab-$name.log"
  kill $smi 2>/dev/null; wait $smi 2>/dev/null
  python scripts/step_clocks_join.py "$OUT/step-ab-$name.json" "$OUT/clocks-$name.csv" > "$OUT/joined-$name.txt" 2>&1
  tail -6 "$OUT/joined-$name.txt"
}
NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_NVLS_ENABLE=0 ab 2gpu python -m torch.distributed.run --standalone --nproc_per_node 2
CUDA_VISIBLE_DEVICES=0 ab 1gpu python
# shellcheck disable=SC2086
timeout -k 10 $(( ${CHECK_BUDGET_S:-300} + 30 )) bash examples/check_reproducible.sh --steps "${STEPS:-60}" --python python --budget-s "${CHECK_BUDGET_S:-300}" \
  --skip-fsdp --skip-step-ab --out "$OUT/repro" ${CHECK_ARGS:-} > "$OUT/check.log" 2>&1
echo "check rc $? ($(( $(date +%s) - t0 ))s)"; sed -n '/^\[check\] pairs/,$p' "$OUT/check.log" | head -30
