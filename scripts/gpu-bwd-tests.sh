#!/usr/bin/env bash
# GPU machine: gpu-bwd-tests.sh OUTDIR. The backward GPU tests of bins/new/dash_gpu_tests
# (TEST_FILTER) in 4 shards (scripts/gpu-suite-shards.sh, LIMIT_S each, default 200) with
# memcheck / racecheck / synccheck of the Sanitize tests alongside; one summary line per shard and
# per sanitizer. Used by gpu-bm80-check.sh and gpu-bm80-default.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
O=$1 LIMIT=${LIMIT_S:-200}  # SHARDS (default 4): gpu-suite-shards.sh
pids=()
for tool in memcheck racecheck synccheck; do
  (timeout -k 5 "$LIMIT" bash scripts/run_sanitizer.sh $tool bins/new/dash_gpu_tests > "$O/sanitizer-$tool.log" 2>&1; echo "rc $?" >> "$O/sanitizer-$tool.log") &
  pids+=($!)
done
DASH_TEST_WATCHDOG_S=${DASH_TEST_WATCHDOG_S:-60} \
  GTEST_FILTER=${TEST_FILTER:-'*BwdSm90*:*Determinism*:*DualWriter*:BwdWorkspace*'} \
  bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$O" "$LIMIT"
rc=$?
for pid in "${pids[@]}"; do wait "$pid"; done
for f in "$O"/sanitizer-*.log; do
  echo "$(basename "$f" .log): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|^rc' "$f" | tr '\n' ' ' | cut -c1-200)"
done
exit $rc
