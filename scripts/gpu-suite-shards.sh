#!/usr/bin/env bash
# The GPU test suite in SHARDS (default 4) shards at once (GPU machine): gpu-suite-shards.sh TESTBIN
# OUTDIR [TIMEOUT_S]. Logs OUTDIR/gpu-shard{0..SHARDS-1}.log, prints one line per shard and the failed
# tests; a shard cut by its TIMEOUT_S says so. Exits 1 if a shard did not pass. Used by gpu-final.sh,
# gpu-prefetch.sh, gpu-binary-ab.sh and gpu-bwd-tests.sh. (The whole suite took 4 x 240 s and more
# in the twentieth session, gpu-next27.sh: its shards 2 and 3 were cut; SHARDS=6 spreads it.)
set -uo pipefail
T=$1 OUT=$2 LIMIT=${3:-300} N=${SHARDS:-4}
pids=()
for ((sh = 0; sh < N; ++sh)); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$sh timeout -k 5 "$LIMIT" "$T" > "$OUT/gpu-shard$sh.log" 2>&1 &
  pids+=($!)
done
rc=0
declare -A cut=()
for ((sh = 0; sh < N; ++sh)); do
  wait "${pids[$sh]}"; r=$?
  [ $r -ne 0 ] && rc=1
  [ $r -eq 124 ] || [ $r -eq 137 ] && cut[$sh]=1
done
for ((sh = 0; sh < N; ++sh)); do
  echo "shard $sh: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gpu-shard$sh.log" | tr '\n' ' ')${cut[$sh]:+cut at ${LIMIT} s after $(grep -c '^\[       OK' "$OUT/gpu-shard$sh.log") passed tests; last: $(grep '^\[ RUN' "$OUT/gpu-shard$sh.log" | tail -1 | cut -c14-)}"
done
grep -h "^\[  FAILED  \] [A-Z]" "$OUT"/gpu-shard*.log | head
exit $rc
