#!/usr/bin/env bash
# GPU machine, one call: the experiments of the 6ed5f35 run (docs/perf.md v5; late taking has been
# the default since, so "late" is the default and "early" sets DASH_BWD_TAKE_LATE=0), each under
# its own timeout, logs and JSON in $OUT (or ./experiment-logs):
#   1. the gated tests of the drafts (lagged dQ, Q/dO repack, late task taking): bitwise equal to
#      the default path;
#   2. lagged dQ: `dash-attn bench --hdim 128` with and without DASH_BWD_LAGGED_DQ=1; late task
#      taking: ascending / spt / descending / atomic with and without DASH_BWD_TAKE_LATE=1;
#   3. the address-span hypothesis for shift's visit-order cost: descending / shift / atomic at
#      hdim 128 full 4k-16k in the default (bshd) layout, in the bhsd layout, and with
#      DASH_BWD_REPACK=1;
#   4. `auto` of the refit planner (d1ffa51) against every schedule, both head dims.
# Builds into BUILD_DIR (default build) when the binaries are missing. Every part prints one
# summary line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/experiment-logs}
mkdir -p "$OUT"
B=${BUILD_DIR:-build}
T=$B/tests/dash_gpu_tests
X=$B/dash-attn
if [ ! -x "$T" ] || [ ! -x "$X" ]; then  # build here (ninja, every core)
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/configure.log" 2>&1 &&
    cmake --build "$B" -j "$(nproc)" > "$OUT/build.log" 2>&1 || { echo "experiments.sh: build failed"; tail -20 "$OUT/build.log"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$OUT/machine.txt" 2>&1
status=0

part() {  # part NAME SECONDS CMD... (stdout+stderr to $OUT/NAME.log)
  local name=$1 secs=$2; shift 2
  timeout -k 5 "$secs" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name rc $rc"
  [ $rc -eq 0 ] || status=1
}

# 1. correctness of the drafts first: a wrong or hanging draft makes its benchmark meaningless.
DASH_TEST_SM90_DRAFT=1 part test-lagged 150 "$T" --gtest_filter='BwdSm90LaggedDq.*'
DASH_TEST_SM90_DRAFT=1 part test-repack 150 "$T" --gtest_filter='BwdSm90Repack.*'
part test-late 150 "$T" --gtest_filter='BwdSm90TakeLate.*'  # late taking: the default since 83059c9
grep -hE "^\[  (PASSED|FAILED) " "$OUT"/test-*.log

# 2. lagged dQ against the default, same process order, hdim 128 (every schedule).
part bench-default 120 "$X" bench --hdim 128 --json "$OUT/bench-default.json"
grep -q "PASSED" "$OUT/test-lagged.log" &&
  DASH_BWD_LAGGED_DQ=1 part bench-lagged 120 "$X" bench --hdim 128 --json "$OUT/bench-lagged.json"

# 2b. late task taking (ascending / spt / descending), both head dims.
grep -q "PASSED" "$OUT/test-late.log" && {
  part bench-late 150 "$X" bench --schedules ascending,spt,descending,atomic --json "$OUT/bench-late.json"
  DASH_BWD_TAKE_LATE=0 part bench-early 150 "$X" bench --schedules ascending,spt,descending,atomic --json "$OUT/bench-early.json"
}

# 2c. both drafts together (hdim 128, every schedule).
grep -q "PASSED" "$OUT/test-lagged.log" && grep -q "PASSED" "$OUT/test-late.log" &&
  DASH_BWD_LAGGED_DQ=1 part bench-lagged-late 120 "$X" bench --hdim 128 --json "$OUT/bench-lagged-late.json"

# 3. address span: the same kernel, three ways of laying out Q/dO.
SPAN=(--hdim 128 --causal 0 --seqlen 4096,8192,16384 --schedules descending,shift,atomic)
part span-bshd 90 "$X" bench "${SPAN[@]}" --json "$OUT/span-bshd.json"
part span-bhsd 90 "$X" bench "${SPAN[@]}" --layout bhsd --json "$OUT/span-bhsd.json"
grep -q "PASSED" "$OUT/test-repack.log" &&
  DASH_BWD_REPACK=1 part span-repack 90 "$X" bench "${SPAN[@]}" --json "$OUT/span-repack.json"
# Which stream costs: the chain off (unordered), then also the dQ reduce-adds off (dQ wrong).
DASH_DEBUG_UNORDERED=1 part span-unordered 90 "$X" bench "${SPAN[@]}" --json "$OUT/span-unordered.json"
DASH_DEBUG_UNORDERED=1 DASH_DEBUG_NO_REDUCE=1 part span-noreduce 90 "$X" bench "${SPAN[@]}" --json "$OUT/span-noreduce.json"

# 4. the planner's picks on the GPU (hdim 64 too; the hdim 128 part is in bench-default.json).
part bench-hdim64 120 "$X" bench --hdim 64 --json "$OUT/bench-hdim64.json"

echo "experiments.sh status $status (logs in $OUT)"
exit $status
