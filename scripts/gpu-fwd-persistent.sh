#!/usr/bin/env bash
# GPU machine, one call: the persistent sm90 forward (DASH_FWD_PERSISTENT, docs/fwd-sm90.md
# "Persistent grid"). Needs build/ (this tree: dash-attn, tests/dash_gpu_tests) and
# build-base/dash-attn (the commit before it) in the snapshot. First run at 7207a2d (~5 min).
#   1. the forward tests (*FwdSm90*: float64 reference, sm80, bits for 5 grid shapes) and the
#      2-CTA persistent test under memcheck, racecheck and synccheck;
#   2. the whole GPU suite in 4 shards (PEERS=1: pip install of the package meanwhile);
#   3. A/B, interleaved, ROUNDS (3) rounds: base (previous commit) / on, and off
#      (DASH_FWD_PERSISTENT=0) with OFF=1;
#   4. PEERS=1: the peers table (scripts/bench-python.sh without the block benchmark, ~3 min).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-fwd-persistent-logs}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
T0=$(date +%s)
el() { echo "($(( $(date +%s) - T0 )) s)"; }
T=build/tests/dash_gpu_tests
echo "== 1. forward tests $(el)"
timeout -k 5 200 "$T" --gtest_filter='*FwdSm90*:Sanitize.ForwardPersistent*' > "$OUT/fwd-tests.log" 2>&1
echo "fwd tests rc $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/fwd-tests.log" | tr '\n' ' ')"
grep -h "^\[  FAILED  \] [A-Z]" "$OUT/fwd-tests.log" | head
for tool in memcheck racecheck synccheck; do
  extra=(); [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  timeout -k 5 120 compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 1 "$T" \
    --gtest_filter='Sanitize.ForwardPersistent*' > "$OUT/san-$tool.log" 2>&1
  echo "$tool rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' "$OUT/san-$tool.log" | tr '\n' ' ')"
done
pip_pid=
if [ "${PEERS:-0}" = 1 ]; then
  (python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
  pip_pid=$!
fi
echo "== 2. suite $(el)"
bash scripts/gpu-suite-shards.sh "$T" "$OUT" 300
[ -n "$pip_pid" ] && { wait "$pip_pid"; tail -1 "$OUT/pip.log"; }
echo "== 3. A/B $(el)"
printf '#!/bin/sh\nDASH_FWD_PERSISTENT=0 exec "$(dirname "$0")/dash-attn" "$@"\n' > build/dash-attn-off
chmod +x build/dash-attn-off
BINS="base=build-base/dash-attn on=build/dash-attn"
[ "${OFF:-0}" = 1 ] && BINS="$BINS off=build/dash-attn-off"
BINS="$BINS" SUITE= ROUNDS=${ROUNDS:-3} SCHEDULES=descending OUT="$OUT" bash scripts/gpu-binary-ab.sh | grep -v "^   "
if [ "${PEERS:-0}" = 1 ]; then
  echo "== 4. peers $(el)"
  SKIP_E2E=1 OUT="$OUT" bash scripts/bench-python.sh > "$OUT/bench-python.log" 2>&1
  grep -A8 "^ratios" "$OUT/peers.log" | cut -c1-150
fi
echo "total $(el)"
