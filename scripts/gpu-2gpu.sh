#!/usr/bin/env bash
# 2-GPU machine (run kind nvidia-h200-x2), from a snapshot of the tree: install the package, run
# examples/check_reproducible.sh (1 GPU and 2 GPUs: DDP and FSDP pairs, cuDNN and SDPA
# deterministic-mode baselines), then the free-SM sweep of the DDP dash run (--num-ctas; the
# default leaves 8 of the SMs to NCCL). Logs under $OUT.
#   STEPS (150)  MARGINS ("4 16": SMs left free besides the default run's 8)  CHECK_BUDGET_S (330)
#   CHECK_ARGS (e.g. "--skip-fsdp": more options for check_reproducible.sh)
#   AB2 (1): first examples/step_time_ab.py under torchrun (DDP, 2 GPUs; AB2_ATTNS, AB2_BLOCKS,
#   AB2_BUDGET_S); AB2_ONLY=1 stops after it
#   AB1 (0): then the same on GPU 0 alone (one process; AB1_BLOCKS, AB1_BUDGET_S)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-2gpu-logs}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
t0=$(date +%s)
python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $? ($(( $(date +%s) - t0 ))s)"
# First the 2-GPU speed question of issue 6 in one process per GPU (DDP), interleaved blocks
# (examples/step_time_ab.py): immune to the scatter between runs that separate processes showed.
if [ "${AB2:-1}" = 1 ]; then
  CUBLAS_WORKSPACE_CONFIG=:4096:8 NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_NVLS_ENABLE=0 \
  timeout -k 10 "${AB2_BUDGET_S:-240}" python -m torch.distributed.run --standalone --nproc_per_node 2 examples/step_time_ab.py \
    --attns "${AB2_ATTNS:-dash,sdpa_cudnn,sdpa_detmode}" --blocks "${AB2_BLOCKS:-6}" --steps-per-block 10 \
    --json "$OUT/step-ab-2gpu.json" > "$OUT/step-ab-2gpu.log" 2>&1
  echo "2-GPU step A/B rc $? ($(( $(date +%s) - t0 ))s)"; grep -E "^  [a-z_]+ +median" "$OUT/step-ab-2gpu.log"
fi
if [ "${AB1:-0}" = 1 ]; then
  CUBLAS_WORKSPACE_CONFIG=:4096:8 CUDA_VISIBLE_DEVICES=0 timeout -k 10 "${AB1_BUDGET_S:-150}" python examples/step_time_ab.py \
    --attns "${AB2_ATTNS:-dash,sdpa_cudnn,sdpa_detmode}" --blocks "${AB1_BLOCKS:-12}" --steps-per-block 10 \
    --json "$OUT/step-ab-1gpu.json" > "$OUT/step-ab-1gpu.log" 2>&1
  echo "1-GPU step A/B rc $? ($(( $(date +%s) - t0 ))s)"; grep -E "^  [a-z_]+ +median" "$OUT/step-ab-1gpu.log"
fi
[ "${AB2_ONLY:-0}" = 1 ] && exit 0
# shellcheck disable=SC2086
timeout -k 10 "$(( ${CHECK_BUDGET_S:-330} + 120 ))" bash examples/check_reproducible.sh --steps "${STEPS:-150}" --python python --budget-s "${CHECK_BUDGET_S:-330}" \
  --out "$OUT/repro" ${CHECK_ARGS:-} > "$OUT/check.log" 2>&1
echo "check rc $? ($(( $(date +%s) - t0 ))s)"; tail -24 "$OUT/check.log"
SMS=$(python -c 'import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)')
export CUBLAS_WORKSPACE_CONFIG=:4096:8 NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for m in ${MARGINS:-4 16}; do
  d="$OUT/sweep-margin$m"; mkdir -p "$d"
  timeout -k 10 90 python -m torch.distributed.run --standalone --nproc_per_node 2 examples/train_llama.py \
    --steps "${STEPS:-150}" --dist ddp --attn dash --num-ctas $((SMS - m)) --no-progress --no-checkpoint --out "$d" > "$d/log.txt" 2>&1
  echo "margin $m (--num-ctas $((SMS - m))) rc $? $(grep -E '^(tokens_per_s|weights_sha256)' "$d/log.txt" | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 ))s"
