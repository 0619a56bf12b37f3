#!/usr/bin/env bash
# The GPU test suite in 4 shards at once (GPU machine): gpu-suite-shards.sh TESTBIN OUTDIR [TIMEOUT_S]
# Logs OUTDIR/gpu-shard{0..3}.log, prints one line per shard and the failed tests; exits 1 if a
# shard did not pass. Used by gpu-final.sh, gpu-prefetch.sh and gpu-binary-ab.sh.
set -uo pipefail
T=$1 OUT=$2 LIMIT=${3:-300}
pids=()
for sh in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$sh timeout -k 5 "$LIMIT" "$T" > "$OUT/gpu-shard$sh.log" 2>&1 &
  pids+=($!)
done
rc=0
for sh in 0 1 2 3; do wait "${pids[$sh]}" || rc=1; done
for sh in 0 1 2 3; do echo "shard $sh: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gpu-shard$sh.log" | tr '\n' ' ')"; done
grep -h "^\[  FAILED  \] [A-Z]" "$OUT"/gpu-shard*.log | head
exit $rc
