#!/usr/bin/env bash
# GPU machine, one call (thirteenth session): the 80-row tile build checked and benchmarked.
# 1. pip install of the package in the background; 2. the backward GPU tests (+ the 80-row
# determinism cases) in 4 shards with the sanitizers alongside, from bins.tgz (bins/new);
# 3. the peers benchmark (SKIP_E2E, PEERS_ARGS default "--hdims 128": the kernel that changed).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-bm80-check-logs}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
[ -d bins ] || tar xzf bins.tgz
(python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
pip_pid=$!
echo "== tests $(el)"
TEST_FILTER=${TEST_FILTER:-'*BwdSm90*:*Determinism*:*DualWriter*:Sm90Primitives*:BwdWorkspace*'} bash scripts/gpu-bwd-tests.sh "$OUT"
wait $pip_pid; tail -1 "$OUT/pip.log"
echo "== peers $(el)"
SKIP_E2E=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-200} PEERS_ARGS=${PEERS_ARGS:---hdims 128} OUT="$OUT" bash scripts/bench-python.sh > "$OUT/bench.log" 2>&1
echo "bench rc $? $(el)"
