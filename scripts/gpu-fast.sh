#!/usr/bin/env bash
# GPU machine, one call, prebuilt binaries (BUILD_DIR, default build; e.g. carried from the dev
# machine): every GPU test as 4 gtest shards run concurrently with the three compute-sanitizer
# tools on the Sanitize tests (concurrent load on the GPU is part of the point: the
# determinism tests must hold under it), then optional parts:
#   DRAFT=1  the gated draft tests and their benchmarks (see below)
#   PYPKG=1  pip install of the PyTorch package (started in the background at once: the compile
#            overlaps the GPU tests), then the pytest suite
#   PEERS=1  scripts/bench-python.sh (bench/peers.py, bench/e2e_block.py) into $OUT/bench
#   TRAIN=1  examples/train_llama.py on one GPU, TRAIN_ATTNS (dash sdpa_cudnn), TRAIN_STEPS (60),
#            TRAIN_PROFILE (5 profiled steps; 0: none), TRAIN_WARMUP (10)
#   HANG=1   the two-writer hangs: scripts/hang-stress.sh with two writers forced, HANG_TESTS (e.g. a
#            DASH_DEBUG_WAITS test binary) x 4 at once (HANG_FILTER, HANG_REPEAT, HANG_BUDGET_S)
#   TRAIN_AB=1  examples/step_time_ab.py: training-step time of TRAIN_AB_ATTNS (dash,sdpa_cudnn,
#            sdpa_detmode) in one process, interleaved blocks (TRAIN_AB_BLOCKS 8 x TRAIN_AB_STEPS 10)
#   BENCH=1  the task-order sweep DASH_HEAD_BLOCK (BENCH_HBS) over BENCH_HDIMS, BENCH_ARGS (e.g.
#            "--causal 0 --seqlen 4096,8192,16384": the L2 question of docs/perf.md v8)
#   NEXT=1   drafts to re-measure (lagged dQ, strided shift): gated bits tests, then bench
#   AB_OLD=BIN  bench this build against an older dash-attn binary (AB_HDIMS, AB_SCHEDULES)
#   PROFILE=1  ncu on the backward (scripts/profile-bwd.sh; SCHEDULES, SEQLEN, HDIM, CAUSAL)
#   TESTS=0  skips the C++ GPU tests and the sanitizers
# Logs in $OUT (or ./gpu-fast-logs); one summary line per part.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-fast-logs}
mkdir -p "$OUT"
B=${BUILD_DIR:-build}
T=${T_TESTS:-$B/tests/dash_gpu_tests}  # T_TESTS: another test binary (scripts/snap-with-branch.sh)
X=${X_NEW:-$B/dash-attn}  # X_NEW: another dash-attn binary as "this build" (scripts/snap-with-branch.sh)
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$OUT/machine.txt" 2>&1
pip_pid=
if [ "${PYPKG:-0}" = 1 ]; then
  (export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc); python -m pip install --no-build-isolation --no-deps -v . \
     > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
  pip_pid=$!
fi
pids=()
if [ "${TESTS:-1}" = 1 ]; then
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout -k 5 ${TEST_TIMEOUT:-300} "$T" > "$OUT/gpu-shard$i.log" 2>&1 &
  pids+=($!)
done
for tool in memcheck racecheck synccheck; do
  timeout -k 5 ${TEST_TIMEOUT:-300} bash scripts/run_sanitizer.sh $tool "$T" > "$OUT/sanitizer-$tool.log" 2>&1 &
  pids+=($!)
done
[ -x "$B/tests/dash_cpu_tests" ] && { "$B/tests/dash_cpu_tests" > "$OUT/cpu-tests.log" 2>&1 || status=1; }
for p in "${pids[@]}"; do wait "$p" || status=1; done
for f in "$OUT"/gpu-shard*.log $([ -f "$OUT/cpu-tests.log" ] && echo "$OUT/cpu-tests.log"); do
  echo "$(basename "$f"): $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$f" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \] [A-Z]" "$f" | head -5
  # No summary line: the shard was killed by its timeout (a hang); name the test that was running.
  grep -qE '^\[  PASSED  \]|^\[  FAILED  \]' "$f" || echo "  TIMED OUT in: $(grep -E '^\[ RUN      \]' "$f" | tail -1)"
done
for t in memcheck racecheck synccheck; do
  echo "sanitizer $t: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/sanitizer-$t.log" | tr '\n' ' ' | cut -c1-200)"
done
fi
if [ "${DRAFT:-0}" = 1 ]; then  # the gated draft tests (each under a timeout), then their benchmarks
  DASH_TEST_SM90_DRAFT=1 timeout -k 5 200 "$T" --gtest_filter='BwdSm90TakeAhead.*' > "$OUT/test-ahead.log" 2>&1
  echo "test take-ahead rc $? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test-ahead.log" | tr '\n' ' ')"
  S=${DRAFT_SCHEDULES:-descending,spt,atomic}
  for d in 128 64; do
    timeout -k 5 150 "$X" bench --hdim $d --schedules $S --json "$OUT/ahead0-hdim$d.json" > "$OUT/ahead0-hdim$d.log" 2>&1
    echo "bench late (ahead 0) hdim $d rc $?"
    timeout -k 5 150 "$X" bench --hdim $d --causal 0 --schedules $S --dispatch static \
      --json "$OUT/static-hdim$d.json" > "$OUT/static-hdim$d.log" 2>&1
    echo "bench static full hdim $d rc $?"
    if grep -q "PASSED" "$OUT/test-ahead.log"; then
      for n in ${AHEAD_LIST:-2}; do
        DASH_BWD_TAKE_AHEAD=$n timeout -k 5 150 "$X" bench --hdim $d --schedules $S \
          --json "$OUT/ahead$n-hdim$d.json" > "$OUT/ahead$n-hdim$d.log" 2>&1
        echo "bench take-ahead $n hdim $d rc $?"
      done
    fi
  done
fi
if [ "${NEXT:-0}" = 1 ]; then  # the open questions of docs/perf.md v7 ("What limits the kernel")
  # 1. The drafts to re-measure now that two writers took the chain off the critical path: their
  #    (gated) bits tests, then benchmarks. Lagged dQ (hdim 128: decouples the two warpgroups'
  #    lockstep; atomic +4..+11% before, ordered schedules paid a step of chain latency) and
  #    strided shift starts (more slack per chain link for shift / symmetric shift), and taking
  #    tasks ahead (DASH_BWD_TAKE_LATE=0) where tasks are short (take-ahead is tied to one writer).
  DASH_TEST_SM90_DRAFT=1 timeout -k 5 300 "$T" --gtest_filter='BwdSm90LaggedDq.*:BwdSm90StridedStarts.*:BwdSm90TakeLate.*' \
    > "$OUT/test-drafts.log" 2>&1
  echo "test drafts rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/test-drafts.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \] [A-Z]" "$OUT/test-drafts.log" | head -5
  for hd in ${NEXT_HDIMS:-128 64}; do
    for v in ${NEXT_VARIANTS:-default lagged strided runahead}; do
      case $v in
        lagged) [ "$hd" = 128 ] || continue; e="DASH_BWD_LAGGED_DQ=1" ;;
        strided) e="DASH_STRIDED_SHIFT=1" ;;
        runahead) e="DASH_BWD_TAKE_LATE=0" ;;  # short tasks (hdim 64, 512/1k): late taking's bubble vs run-ahead
        *) e="DASH_NOTHING=1" ;;
      esac
      env $e timeout -k 5 150 "$X" bench --hdim $hd --schedules ${NEXT_SCHEDULES:-ascending,spt,descending,shift,symmetric_shift,atomic} \
        --json "$OUT/next-$v-hdim$hd.json" > "$OUT/next-$v-hdim$hd.log" 2>&1
      echo "bench $v hdim $hd rc $?"
    done
  done
fi
if [ -n "${AB_OLD:-}" ]; then  # A/B: this build's dash-attn against an older binary, same process order, both head dims
  for hd in ${AB_HDIMS:-128 64}; do
    for v in old new; do
      bin=$X; [ $v = old ] && bin=$AB_OLD
      timeout -k 5 150 "$bin" bench --hdim $hd --schedules ${AB_SCHEDULES:-ascending,spt,descending,atomic,auto} \
        --json "$OUT/ab-$v-hdim$hd.json" > "$OUT/ab-$v-hdim$hd.log" 2>&1
      echo "bench $v hdim $hd rc $?"
    done
  done
fi
if [ "${PROFILE:-0}" = 1 ]; then  # ncu on the backward main kernel (scripts/profile-bwd.sh; HDIM, SEQLEN, ...)
  OUT=$OUT/profile timeout -k 5 ${PROFILE_BUDGET_S:-240} bash scripts/profile-bwd.sh > "$OUT/profile.txt" 2>&1
  echo "profile rc $?"; grep -E "^==|Duration|Tensor|No Eligible" "$OUT/profile.txt" | head -20
fi
if [ -n "$pip_pid" ]; then
  wait "$pip_pid"; tail -1 "$OUT/pip.log"
  (cd /tmp && python -c "import dash_attn; dash_attn._ops.extension(); print('dash_attn', dash_attn.__version__)") || status=1
  timeout -k 5 300 python -m pytest -q -rs tests/python > "$OUT/pytest.log" 2>&1 || status=1
  echo "pytest: $(tail -1 "$OUT/pytest.log")"
fi
if [ "${PEERS:-0}" = 1 ]; then  # bench/peers.py + bench/e2e_block.py (the package is installed above)
  OUT=$OUT/bench timeout -k 10 420 bash scripts/bench-python.sh > "$OUT/bench-python.txt" 2>&1
  echo "bench-python rc $?"; tail -4 "$OUT/bench-python.txt"
fi
if [ "${TRAIN:-0}" = 1 ]; then  # one GPU, dash vs cuDNN SDPA (vs SDPA det. mode), optional profile
  export CUBLAS_WORKSPACE_CONFIG=:4096:8
  for a in ${TRAIN_ATTNS:-dash sdpa_cudnn}; do
    timeout -k 5 150 python examples/train_llama.py --attn $a --steps ${TRAIN_STEPS:-60} --no-checkpoint --no-progress \
      --profile-steps ${TRAIN_PROFILE:-5} --timing-warmup ${TRAIN_WARMUP:-10} --out "$OUT/train-$a" > "$OUT/train-$a.log" 2>&1
    echo "train $a rc $? $(grep -E '^tokens_per_s' "$OUT/train-$a.log")"
  done
fi
if [ "${HANG:-0}" = 1 ]; then  # the two-writer hangs (docs/perf.md v8): scripts/hang-stress.sh, 4 processes
  # of HANG_TESTS (e.g. a DASH_DEBUG_WAITS build's test binary) at once, two writers forced
  DASH_BWD_DUAL_WRITER=2 N_REL=4 N_DBG=0 REL_TESTS=${HANG_TESTS:-$T} FILTER="${HANG_FILTER:-BwdSm90TakeAhead.TwoWritersForced*}" \
    REPEAT=${HANG_REPEAT:-4} BUDGET_S=${HANG_BUDGET_S:-90} OUT=$OUT/hang bash scripts/hang-stress.sh
fi
if [ "${TRAIN_AB:-0}" = 1 ]; then  # training-step time of the attentions in one process, interleaved
  export CUBLAS_WORKSPACE_CONFIG=:4096:8
  timeout -k 5 ${TRAIN_AB_BUDGET_S:-240} python examples/step_time_ab.py --attns ${TRAIN_AB_ATTNS:-dash,sdpa_cudnn,sdpa_detmode} \
    --blocks ${TRAIN_AB_BLOCKS:-8} --steps-per-block ${TRAIN_AB_STEPS:-10} --json "$OUT/step-ab.json" > "$OUT/step-ab.log" 2>&1
  echo "step-time A/B rc $?"; grep -E "^  [a-z_]+ +median" "$OUT/step-ab.log"
fi
if [ "${BENCH:-0}" = 1 ]; then
  for hb in ${BENCH_HBS:-1 2 4 8 16}; do
    for d in ${BENCH_HDIMS:-128 64}; do
      DASH_HEAD_BLOCK=$hb timeout -k 5 150 "$X" bench --hdim $d --schedules ascending,spt,descending,atomic ${BENCH_ARGS:-} \
        --json "$OUT/hb$hb-hdim$d.json" > "$OUT/hb$hb-hdim$d.log" 2>&1
      echo "bench head_block $hb hdim $d rc $?"
    done
  done
fi
echo "gpu-fast.sh status $status"
exit $status
