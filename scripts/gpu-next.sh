#!/usr/bin/env bash
# GPU machine: the checks docs/perf.md v8 leaves for the next session, in order. PARTS="1 2"
# (~6.5 min) and PARTS=3 (~3 min) fit one device call each (600 s); default: all three.
#   1. The exit-post fix (6a30c76) under the stress that hung: two writers forced everywhere
#      (DASH_BWD_DUAL_WRITER=2: static dispatch and take-ahead too), 3 release processes at once
#      on the grid-size tests and the take-ahead tests (scripts/hang-stress.sh; the watchdog
#      dumps mailboxes and semaphores if one still hangs).
#   2. The whole GPU suite with DASH_BWD_DUAL_WRITER=2 exported (every path with two writers),
#      with the sanitizers (scripts/gpu-fast.sh).
#   3. The head-block / L2 sweep at full 4k-16k (BENCH, incl. DASH_HEAD_BLOCK=l2) and take-ahead
#      with two writers at hdim 64 (where tasks are short) against the default.
# Logs under $OUT; one summary line per part. Decide afterwards: lift the guards in
# attention_api.cu if 1 and 2 pass; change default_head_block if l2 wins at 16k without losing
# at 4k.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-next-logs}; mkdir -p "$OUT"
B=${BUILD_DIR:-build}
P=" ${PARTS:-1 2 3} "
if [[ $P == *" 1 "* ]]; then
echo "== 1. stress, two writers forced"
DASH_BWD_DUAL_WRITER=2 FILTER='*BwdSm90Determinism.IndependentOfGridSizeAndDispatch*:BwdSm90TakeAhead.*' \
  N_REL=3 N_DBG=0 REPEAT=${STRESS_REPEAT:-3} BUDGET_S=${STRESS_BUDGET_S:-150} REL_TESTS=$B/tests/dash_gpu_tests \
  OUT=$OUT/stress bash scripts/hang-stress.sh | tail -12
fi
if [[ $P == *" 2 "* ]]; then
echo "== 2. GPU suite, two writers forced"
DASH_BWD_DUAL_WRITER=2 TESTS=1 TEST_TIMEOUT=${TEST_TIMEOUT:-280} OUT=$OUT/suite bash scripts/gpu-fast.sh | tail -12
fi
if [[ $P == *" 3 "* ]]; then
echo "== 3. head blocks at full 4k-16k, and take-ahead with two writers at hdim 64"
BENCH=1 TESTS=0 BENCH_HBS="${BENCH_HBS:-1 2 4 16 l2}" BENCH_ARGS="--causal 0 --seqlen 4096,8192,16384" \
  OUT=$OUT/bench bash scripts/gpu-fast.sh | tail -12
for v in default ahead1 ahead5; do
  case $v in ahead1) e="DASH_BWD_TAKE_AHEAD=1 DASH_BWD_DUAL_WRITER=2" ;; ahead5) e="DASH_BWD_TAKE_AHEAD=5 DASH_BWD_DUAL_WRITER=2" ;; *) e="DASH_NOTHING=1" ;; esac
  env $e timeout -k 5 150 "$B/dash-attn" bench --hdim 64 --seqlen 512,1024,2048 --schedules ascending,spt,descending,atomic \
    --json "$OUT/ahead-$v-hdim64.json" > "$OUT/ahead-$v-hdim64.log" 2>&1
  echo "bench $v hdim 64 rc $?"
done
fi
