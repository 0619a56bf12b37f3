#!/usr/bin/env bash
# GPU machine, one device call (<= ~570 s): the numbers of docs/perf.md v9 with the defaults of
# this commit. While the PyTorch package compiles (pip, background): `dash-attn bench` (every
# schedule, both head dims) and scripts/hang-stress.sh with the defaults (two writers + take-ahead,
# grid-size tests, 3 processes). Then bench/peers.py (PEERS_HDIMS, PEERS_IMPLS) with the time left.
# A second call on the warm machine finds the package installed (scripts/bench-python.sh skips it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-peers-logs}; mkdir -p "$OUT"
B=${BUILD_DIR:-build}; T0=$(date +%s)
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
pip_pid=
if ! (cd /tmp && python -c "import dash_attn._C" 2>/dev/null); then
  (python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
  pip_pid=$!
fi
if [ "${BENCH:-1}" = 1 ]; then
  for d in 128 64; do
    timeout -k 5 120 "$B/dash-attn" bench --hdim $d --json "$OUT/bench-hdim$d.json" > "$OUT/bench-hdim$d.log" 2>&1
    echo "bench hdim $d rc $? ($(( $(date +%s) - T0 )) s)"
  done
fi
if [ "${STRESS:-1}" = 1 ]; then
  FILTER='*BwdSm90Determinism.IndependentOfGridSizeAndDispatch*:BwdSm90TakeAhead.*' N_REL=3 N_DBG=0 REPEAT=2 \
    BUDGET_S=90 REL_TESTS=$B/tests/dash_gpu_tests OUT=$OUT/stress bash scripts/hang-stress.sh | tail -4
  echo "stress done ($(( $(date +%s) - T0 )) s)"
fi
[ -n "$pip_pid" ] && { wait $pip_pid; tail -1 "$OUT/pip.log"; echo "install done ($(( $(date +%s) - T0 )) s)"; }
left=$(( ${CALL_S:-560} - ($(date +%s) - T0) - 40 ))
echo "peers budget ${left}s"
PEERS_ARGS="--hdims ${PEERS_HDIMS:-128,64} --impls ${PEERS_IMPLS:-cudnn,flex,flash,dash:ascending,dash:spt,dash:descending,dash:auto,dash:atomic}" \
  PEERS_BUDGET_S=$left SKIP_E2E=${SKIP_E2E:-1} OUT=$OUT/peers timeout -k 5 $(( left + 35 )) bash scripts/bench-python.sh > "$OUT/bench-python.txt" 2>&1
echo "peers rc $? ($(( $(date +%s) - T0 )) s)"; tail -3 "$OUT/bench-python.txt"
