#!/usr/bin/env bash
# GPU machine: the device calls docs/perf.md v9 leaves for the next session, in one call (~8 min).
# (The previous contents of this script, the v8 checks, ran at da2f9a9: docs/perf.md v9 items 1-3.)
#   0. The early-dV draft (DASH_BWD_EARLY_DV=1: dV issued under the dS math): its bits tests,
#      racecheck + synccheck on the Sanitize test with it, then `dash-attn bench` default vs
#      early-dV, both head dims, interleaved twice (A B A B).
#   1. ncu on the backward at hdim 128 full 8k, atomic and descending (scripts/profile-bwd.sh,
#      the first profile since bea1336), with the per-step phase split (scripts/ncu_stalls.py
#      --phases): what limits hdim 128 against cuDNN (0.88-0.97).
#   2. The PyTorch package (pip, in the background during 1), then the host time per attention call
#      (bench/host_overhead.py: custom ops vs the eager-Function draft vs SDPA), the draft's bits
#      test, and the training-step A/B (dash, dash_op, cuDNN SDPA, det. SDPA) with the SM clock
#      / power logged per block (scripts/gpu-step-clocks.sh): what the slow mode is, and whether
#      the host path per call matters.
#   3. bench/peers.py with interleaved rounds (3 x 4 iterations, scripts/bench-python.sh): the
#      issue-4 table with the in-process noise shared by all implementations.
# PARTS selects (default "0 1 2 3"); logs under $OUT, one summary line per part.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-next-logs}; mkdir -p "$OUT"
B=${BUILD_DIR:-build}; T0=$(date +%s)
P=" ${PARTS:-0 1 2 3} "
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
pip_pid=
if [[ $P == *" 2 "* || $P == *" 3 "* ]] && ! (cd /tmp && python -c "import dash_attn._C" 2>/dev/null); then
  (python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
  pip_pid=$!
fi
if [[ $P == *" 0 "* ]]; then
  echo "== 0. early-dV draft"
  timeout -k 5 150 "$B/tests/dash_gpu_tests" --gtest_filter='BwdSm90EarlyDv.*' > "$OUT/test-early-dv.log" 2>&1
  echo "tests rc $? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test-early-dv.log" | tr '\n' ' ')"
  for tool in racecheck synccheck; do
    DASH_BWD_EARLY_DV=1 timeout -k 5 120 bash scripts/run_sanitizer.sh $tool "$B/tests/dash_gpu_tests" > "$OUT/early-dv-$tool.log" 2>&1
    echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/early-dv-$tool.log" | tr '\n' ' ' | cut -c1-160)"
  done
  if grep -q "PASSED" "$OUT/test-early-dv.log"; then
    for round in 1 2; do
      for v in 0 1; do
        for d in 128 64; do
          DASH_BWD_EARLY_DV=$v timeout -k 5 100 "$B/dash-attn" bench --hdim $d --schedules spt,descending,atomic \
            --json "$OUT/early-dv-r$round-v$v-hdim$d.json" > "$OUT/early-dv-r$round-v$v-hdim$d.log" 2>&1
        done
      done
    done
    echo "early-dV bench done ($(( $(date +%s) - T0 )) s)"
  fi
fi
if [[ $P == *" 1 "* ]]; then
  echo "== 1. ncu, hdim 128 full 8k"
  HDIM=128 CAUSAL=0 SEQLEN=8192 SCHEDULES="atomic descending" OUT=$OUT/profile timeout -k 5 300 \
    bash scripts/profile-bwd.sh > "$OUT/profile.txt" 2>&1
  echo "profile rc $? ($(( $(date +%s) - T0 )) s)"; grep -E "^==|Duration|Tensor|Issue Slots" "$OUT/profile.txt" | head -12
  for s in atomic descending; do
    [ -f "$OUT/profile/bwd-$s-sass.csv" ] && python scripts/ncu_stalls.py "$OUT/profile/bwd-$s-sass.csv" --phases \
      > "$OUT/profile/phases-$s.txt" 2>&1 && head -30 "$OUT/profile/phases-$s.txt"
  done
fi
[ -n "$pip_pid" ] && { wait $pip_pid; tail -1 "$OUT/pip.log"; echo "install done ($(( $(date +%s) - T0 )) s)"; }
if [[ $P == *" 2 "* ]]; then
  echo "== 2. host overhead per call; the eager-path draft's bits; step-time A/B with clocks"
  timeout -k 5 60 python bench/host_overhead.py --json "$OUT/host.json" > "$OUT/host.log" 2>&1; echo "host_overhead rc $?"; tail -4 "$OUT/host.log"
  timeout -k 5 90 python -m pytest -q -rs tests/python/test_gpu.py -k eager > "$OUT/pytest-eager.log" 2>&1
  echo "eager-path bits: $(tail -1 "$OUT/pytest-eager.log")"
  ATTNS=${ATTNS:-dash,dash_op,sdpa_cudnn,sdpa_detmode} BLOCKS=${BLOCKS:-10} OUT=$OUT/clocks timeout -k 5 220 \
    bash scripts/gpu-step-clocks.sh | tail -9
fi
if [[ $P == *" 3 "* ]]; then
  echo "== 3. peers, interleaved rounds"
  left=$(( ${CALL_S:-570} - ($(date +%s) - T0) - 30 ))
  PEERS_BUDGET_S=$left SKIP_E2E=1 OUT=$OUT/peers timeout -k 5 $(( left + 25 )) bash scripts/bench-python.sh > "$OUT/bench-python.txt" 2>&1
  echo "peers rc $? ($(( $(date +%s) - T0 )) s)"; tail -3 "$OUT/bench-python.txt"
fi
