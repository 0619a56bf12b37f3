#!/usr/bin/env bash
# GPU machine: is take-ahead (DASH_BWD_TAKE_AHEAD=N, kv_near_end) ready to be the default, now
# that it runs with the two dQ writers (docs/perf.md v9)? One device call (~8 min):
#   1. the whole GPU suite and memcheck/racecheck/synccheck with DASH_BWD_TAKE_AHEAD=${AHEAD:-1}
#      exported (scripts/gpu-fast.sh), plus synccheck with N = 2 (the value that once reported
#      "Missing wait", docs/perf.md v5);
#   2. the benchmark, default against N = 1 and N = 2, both head dims, interleaved twice
#      (A B C A B C) so that drift shows up as disagreement between the two rounds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-ahead-logs}; mkdir -p "$OUT"
B=${BUILD_DIR:-build}
if [ "${SUITE:-1}" = 1 ]; then
  DASH_BWD_TAKE_AHEAD=2 timeout -k 5 280 bash scripts/run_sanitizer.sh synccheck $B/tests/dash_gpu_tests \
    > "$OUT/synccheck-ahead2.log" 2>&1 &
  pid=$!
  DASH_BWD_TAKE_AHEAD=${AHEAD:-1} TESTS=1 TEST_TIMEOUT=280 OUT=$OUT/suite bash scripts/gpu-fast.sh | tail -12
  wait $pid
  echo "synccheck ahead 2: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/synccheck-ahead2.log" | tr '\n' ' ' | cut -c1-200)"
fi
S=${SCHEDULES:-spt,descending,atomic}
for round in 1 2; do
  for v in 0 1 2; do
    for d in 128 64; do
      DASH_BWD_TAKE_AHEAD=$v timeout -k 5 100 "$B/dash-attn" bench --hdim $d --schedules $S \
        --json "$OUT/r$round-ahead$v-hdim$d.json" > "$OUT/r$round-ahead$v-hdim$d.log" 2>&1
      echo "round $round ahead $v hdim $d rc $?"
    done
  done
done
