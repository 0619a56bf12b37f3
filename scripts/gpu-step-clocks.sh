#!/usr/bin/env bash
# GPU machine (issue 6): what is the slow mode of the training step? The interleaved step-time
# A/B (examples/step_time_ab.py) with the GPU's SM clock, power and throttle reasons logged every
# 100 ms (nvidia-smi) and each block's host enqueue time recorded; then one line per block:
# attention, GPU ms per step, host enqueue share, mean SM clock and power during the block.
# Installs the package first (pip, no pytest). Logs in $OUT. Knobs: BLOCKS (8), ATTNS.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/step-clocks-logs}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc) CUBLAS_WORKSPACE_CONFIG=:4096:8
t0=$(date +%s)
if ! (cd /tmp && python -c "import dash_attn._C" 2>/dev/null); then
  python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $? ($(( $(date +%s) - t0 ))s)"
fi
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader,nounits -lms 100 > "$OUT/clocks.csv" 2>&1 &
smi=$!
timeout -k 5 ${AB_BUDGET_S:-150} python examples/step_time_ab.py --attns ${ATTNS:-dash,sdpa_cudnn,sdpa_detmode} \
  --blocks ${BLOCKS:-8} --steps-per-block 10 --json "$OUT/step-ab.json" > "$OUT/step-ab.log" 2>&1
echo "step A/B rc $? ($(( $(date +%s) - t0 ))s)"; grep -E "^  [a-z_]+ +median" "$OUT/step-ab.log"
kill $smi 2>/dev/null; wait $smi 2>/dev/null
python scripts/step_clocks_join.py "$OUT/step-ab.json" "$OUT/clocks.csv" | tee "$OUT/joined.txt"
