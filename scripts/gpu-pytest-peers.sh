#!/usr/bin/env bash
# GPU machine: gpu-pytest-peers.sh OUTDIR, with the package installed (or its install running in
# the background with "pip rc N" as the last line of OUTDIR/pip.log): pytest (tests/python), then
# the peers benchmark (scripts/bench-python.sh, PEERS_BUDGET_S, PEERS_ARGS) and its ratio tables.
# PIP_INSTALL=1: run the install first (MAX_JOBS from the caller).
# Used by gpu-final17.sh, gpu-next18.sh, gpu-s18d.sh, gpu-next19.sh, gpu-s19.sh and gpu-next20.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
O=$1
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
if [ "${PIP_INSTALL:-0}" = 1 ]; then  # install the package here first
  echo "== pip $(el)"
  python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $?" >> "$O/pip.log"
fi
if [ -f "$O/pip.log" ]; then until grep -q "^pip rc" "$O/pip.log"; do sleep 2; done; tail -1 "$O/pip.log"; fi
echo "== pytest $(el)"
(timeout -k 5 150 python -m pytest tests/python -q -x -p no:cacheprovider > "$O/pytest.log" 2>&1; echo "pytest rc $?" >> "$O/pytest.log")
tail -3 "$O/pytest.log"
echo "== peers $(el)"
SKIP_E2E=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-170} PEERS_ARGS=${PEERS_ARGS:-} OUT="$O" bash scripts/bench-python.sh > "$O/peers-run.log" 2>&1
echo "peers rc $? $(el)"
grep -A8 "^ratios" "$O/peers.log" | head -60
