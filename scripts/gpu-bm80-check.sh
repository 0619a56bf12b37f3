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
pids=()
for tool in memcheck racecheck synccheck; do
  (timeout -k 5 200 bash scripts/run_sanitizer.sh $tool bins/new/dash_gpu_tests > "$OUT/sanitizer-$tool.log" 2>&1; echo "rc $?" >> "$OUT/sanitizer-$tool.log") &
  pids+=($!)
done
DASH_TEST_WATCHDOG_S=60 GTEST_FILTER=${TEST_FILTER:-'*BwdSm90*:*Determinism*:*DualWriter*:Sm90Primitives*:BwdWorkspace*'} \
  bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$OUT" 200
for pid in "${pids[@]}"; do wait "$pid"; done
for f in "$OUT"/sanitizer-*.log; do
  echo "$(basename "$f" .log): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|^rc' "$f" | tr '\n' ' ' | cut -c1-200)"
done
wait $pip_pid; tail -1 "$OUT/pip.log"
echo "== peers $(el)"
SKIP_E2E=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-200} PEERS_ARGS=${PEERS_ARGS:---hdims 128} OUT="$OUT" bash scripts/bench-python.sh > "$OUT/bench.log" 2>&1
echo "bench rc $? $(el)"
