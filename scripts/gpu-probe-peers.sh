#!/usr/bin/env bash
# GPU machine, one call (~7 min), the next measurements after the tenth session (docs/perf.md,
# "Next device calls"):
#   1. bench/probes/dq_reduce_bw.cu (compiled here with nvcc, ~30 s): the dQ writer's bulk
#      reduce per step with every SM at once, solo vs a cluster pair pre-summing through DSMEM;
#   2. the peers table for the current kernels (scripts/bench-python.sh without the block
#      benchmark: bench/peers.py, 3 interleaved rounds; the package is installed first).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-probe-peers-logs}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
T0=$(date +%s)
echo "== 1. dQ reduce probe"
if nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -o /tmp/dq_reduce_bw bench/probes/dq_reduce_bw.cu > "$OUT/probe-build.log" 2>&1; then
  timeout -k 5 120 /tmp/dq_reduce_bw 2000 2>&1 | tee "$OUT/probe.txt"
else
  echo "probe build failed"; tail -20 "$OUT/probe-build.log"
fi
echo "== 2. peers ($(( $(date +%s) - T0 )) s)"
SKIP_E2E=1 OUT="$OUT" bash scripts/bench-python.sh 2>&1 | tail -60
echo "total $(( $(date +%s) - T0 )) s"
