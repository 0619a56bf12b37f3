#!/usr/bin/env bash
# GPU machine, one call (~4 min): the final state of a session on one GPU.
#   1. the GPU test suite in 4 shards at once (pip install of the package in the background);
#   2. pytest tests/python (the package on the GPU);
#   3. the training-step A/B with clocks (scripts/gpu-step-clocks.sh; ATTNS, BLOCKS);
#   4. examples/check_reproducible.sh --one-gpu (dash pair, cuDNN pair; CHECK_ARGS, STEPS 60).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-final-logs}; mkdir -p "$OUT"
B=${BUILD_DIR:-build}; T0=$(date +%s)
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc) CUBLAS_WORKSPACE_CONFIG=:4096:8
el() { echo "($(( $(date +%s) - T0 )) s)"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; cat COMMIT 2>/dev/null; } > "$OUT/machine.txt"
(python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
pip_pid=$!
bash scripts/gpu-suite-shards.sh "$B/tests/dash_gpu_tests" "$OUT" 240
wait $pip_pid; tail -1 "$OUT/pip.log"; echo "tests + install $(el)"
timeout -k 5 120 python -m pytest -q -rs tests/python > "$OUT/pytest.log" 2>&1; echo "pytest: $(tail -1 "$OUT/pytest.log") $(el)"
ATTNS=${ATTNS:-dash,dash_op,sdpa_cudnn,sdpa_detmode} BLOCKS=${BLOCKS:-8} OUT=$OUT/clocks AB_BUDGET_S=120 timeout -k 5 150 \
  bash scripts/gpu-step-clocks.sh | tail -6
echo "step A/B $(el)"
# shellcheck disable=SC2086
timeout -k 10 $(( ${CHECK_BUDGET_S:-120} + 40 )) bash examples/check_reproducible.sh --one-gpu --steps "${STEPS:-60}" --python python \
  --budget-s "${CHECK_BUDGET_S:-120}" --skip-step-ab --out "$OUT/repro" ${CHECK_ARGS:-} > "$OUT/check.log" 2>&1
echo "check rc $? $(el)"; sed -n '/^\[check\] pairs/,$p' "$OUT/check.log" | head -20
