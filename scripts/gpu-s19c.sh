#!/usr/bin/env bash
# GPU machine, the eighteenth session's last call (about 5 minutes; the session's device time was
# nearly spent): causal head_dim 64 80-row tiles the default. Prebuilt binaries (bins.tgz:
# bins/new); carry [".snap"]; `cd .snap && bash scripts/gpu-s19c.sh`.
# 1. the tests the default flip touches, with the switch unset (the whole suite passed with
#    DASH_BWD_SM90_D64_CAUSAL_BM80=1 at d76033c: docs/data/c80-h200-d76033c);
# 2. pip install, then the peers benchmark (PEERS_BUDGET_S) written straight to $OUT (a cut run
#    keeps the shapes it finished). No pytest here (140 passed at 106791e; the Python side is unchanged).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-s19c
{
echo "== tests $(el)"
DASH_TEST_WATCHDOG_S=60 timeout -k 5 90 bins/new/dash_gpu_tests \
  --gtest_filter='BwdSm90D64CausalBm80.*:*Rule*:*Auto*:BwdSm90Wide/BwdSm90Determinism.*d64*causal*' > "$O/tests.log" 2>&1
echo "tests rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/tests.log" | tr '\n' ' ')"
echo "== pip $(el)"
python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $?"
echo "== peers $(el)"
cp "$O"/*.log "$DEST/" 2>/dev/null
SKIP_E2E=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-140} OUT="$DEST" bash scripts/bench-python.sh > "$DEST/peers-run.log" 2>&1
echo "peers rc $? $(el)"
grep -A8 "^ratios" "$DEST/peers.log" | head -40
echo "total $(el)"
} 2>&1 | tee "$DEST/run.log"
rm -f "$DEST/pip.log"
