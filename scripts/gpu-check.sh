#!/usr/bin/env bash
# One command for a GPU machine: configure, build, run every GPU test (and the CPU ones), the
# compute-sanitizer label, and the benchmark. Logs land in one folder: $OUT if set (the device
# tool), else ./gpu-check-logs.
#   STAGES="build test sanitize debug bench" (default), plus "sm90": only the Hopper kernels
#   tests (also part of "test"), fwd and bwd each under SM90_TIMEOUT (150 s), and "sm90draft":
#   only the tests of the experimental variants (not part of "test", where they skip): the
#   strided starts of shift (DASH_STRIDED_SHIFT=1), the head-major Q/dO repack
#   (DASH_BWD_REPACK=1, draft), the lagged dQ GEMM (DASH_BWD_LAGGED_DQ=1, draft) and the
#   overlapped dQ writer (DASH_BWD_WRITER_OVERLAP=1, draft), with DASH_TEST_SM90_DRAFT=1, each in its own process under
#   SM90_DRAFT_TIMEOUT (150 s), plus the SASS check of the sm90 objects.
#   BUILD_DIR=build   BENCH_ARGS="..."
#   GTEST_FILTER=... limits the GPU tests (passed to the test binary)
set -uo pipefail
cd "$(dirname "$0")/.."
LOG=${OUT:-$PWD/gpu-check-logs}
mkdir -p "$LOG"
STAGES=${STAGES:-"build test sanitize debug bench"}
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
step() { echo; echo "=== $* ($(date +%T))"; }

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; git rev-parse --short HEAD 2>/dev/null; date -u; } > "$LOG/machine.txt" 2>&1
cat "$LOG/machine.txt"

if has build; then
  step build
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$LOG/configure.log" 2>&1 || { cat "$LOG/configure.log"; exit 1; }
  cmake --build "$BUILD_DIR" -j "$JOBS" > "$LOG/build.log" 2>&1 || { tail -50 "$LOG/build.log"; exit 1; }
  bash scripts/check_ptxas.sh "$LOG/build.log" | tee "$LOG/ptxas.txt" || status=1
fi

if has test; then
  step "tests (cpu + gpu)"
  if [ -n "${GTEST_FILTER:-}" ]; then
    "$BUILD_DIR/tests/dash_gpu_tests" --gtest_filter="$GTEST_FILTER" 2>&1 | tee "$LOG/gpu-tests.log" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |^\[==========\]|Failure|error" | tail -40
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  else
    ctest --test-dir "$BUILD_DIR" -L "cpu|gpu" -j 4 --output-on-failure > "$LOG/ctest.log" 2>&1 || status=1
    grep -E "tests passed|FAILED|Failed|Skipped|Total Test" "$LOG/ctest.log" | tail -30
  fi
fi

if has sm90; then
  # Forward and backward drafts in separate processes, each under its own timeout, so a hang in
  # one does not hide the other's results.
  for part in "fwd:Shapes/FwdSm90.*" "bwd:*BwdSm90*"; do
    name=${part%%:*}; filt=${part#*:}
    step "Hopper $name tests ( ${SM90_TIMEOUT:-150} s timeout)"
    timeout -k 5 "${SM90_TIMEOUT:-150}" "$BUILD_DIR/tests/dash_gpu_tests" --gtest_filter="$filt" \
      > "$LOG/sm90-$name.log" 2>&1; rc=$?
    [ $rc -eq 0 ] || { echo "sm90 $name tests failed or timed out (rc $rc)"; status=1; }
    grep -E "^\[  (PASSED|FAILED) |^\[       OK|timed out|trap|Failure" "$LOG/sm90-$name.log" | tail -25
  done
fi

if has sm90draft; then
  # Each part in its own process under its own timeout, so that a hang (an mbarrier or semaphore
  # wait) in one does not hide the others' results.
  if command -v cuobjdump > /dev/null; then  # HGMMA forms per instantiation (docs/bwd-sm90.md)
    bash scripts/check_sass.sh "$BUILD_DIR"/CMakeFiles/dash_attn.dir/src/kernels/attn_{fwd,bwd}_sm90.cu.o \
      > "$LOG/sm90draft-sass.txt" 2>&1 || { echo "check_sass failed: $LOG/sm90draft-sass.txt"; status=1; }
    tail -1 "$LOG/sm90draft-sass.txt"
  fi
  for part in "lagged:BwdSm90LaggedDq.*" "overlap:BwdSm90WriterOverlap.*" "repack:BwdSm90Repack.*" "strided:BwdSm90StridedStarts.*"; do
    name=${part%%:*}; filt=${part#*:}
    step "Hopper experimental $name tests ( ${SM90_DRAFT_TIMEOUT:-150} s timeout)"
    DASH_TEST_SM90_DRAFT=1 timeout -k 5 "${SM90_DRAFT_TIMEOUT:-150}" \
      "$BUILD_DIR/tests/dash_gpu_tests" --gtest_filter="$filt" > "$LOG/sm90draft-$name.log" 2>&1; rc=$?
    [ $rc -eq 0 ] || { echo "sm90draft $name tests failed or timed out (rc $rc)"; status=1; }
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|timed out|trap|Failure" "$LOG/sm90draft-$name.log" | tail -25
  done
fi

if has sanitize; then
  step "compute-sanitizer (memcheck, racecheck, synccheck)"
  ctest --test-dir "$BUILD_DIR" -L sanitizer --output-on-failure > "$LOG/sanitizer.log" 2>&1 || status=1
  grep -E "tests passed|Failed|Total Test|ERROR SUMMARY" "$LOG/sanitizer.log" | tail -12
fi

if has debug; then
  step "debug build (bounded waits that trap) + determinism tests"
  cmake -S . -B build-debug -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDASH_DEBUG_WAITS=ON > "$LOG/debug-configure.log" 2>&1 &&
    cmake --build build-debug -j "$JOBS" --target dash_gpu_tests > "$LOG/debug-build.log" 2>&1 || { tail -30 "$LOG/debug-build.log"; status=1; }
  build-debug/tests/dash_gpu_tests --gtest_filter='Schedules/Determinism.*Grid*:Sanitize*:Launcher*' > "$LOG/debug-tests.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED) |dQ semaphore wait timed out" "$LOG/debug-tests.log" | tail -10
fi

if has bench; then
  step bench
  "$BUILD_DIR/dash-attn" bench ${BENCH_ARGS:-} --json "$LOG/bench.json" 2>&1 | tee "$LOG/bench.txt" || status=1
fi
echo "gpu-check: logs in $LOG, status $status"
exit $status
