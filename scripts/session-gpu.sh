#!/usr/bin/env bash
# One device call for a whole GPU session's checks, with its logs packed so that they come back
# through the device tool (at most 8 files from $OUT): gpu-check.sh (build, every C++ test, the
# sanitizers, the debug-waits build, the benchmark), optionally the PyTorch package
# (python-check.sh) and the peers / transformer-block benchmarks (bench-python.sh).
#   STAGES  passed to gpu-check.sh (default "build test sanitize debug bench")
#   PY=1    also scripts/python-check.sh;   PEERS=1  also scripts/bench-python.sh
#   CHECK_TIMEOUT (400) / PY_TIMEOUT (240) / PEERS_TIMEOUT (420) seconds per part
# $OUT (or ./session-logs) receives: summary.txt, logs.tgz (every log), and copies of
# bench.json, pytest.log, peers.json, peers.png, e2e.json when they exist.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/session-logs}
mkdir -p "$OUT"
W=$(mktemp -d)
status=0
{
  echo "session-gpu.sh at $(cat COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null), $(date -u)"
  echo "=== gpu-check.sh (STAGES=${STAGES:-default})"
  OUT=$W/check timeout -k 10 "${CHECK_TIMEOUT:-400}" bash scripts/gpu-check.sh 2>&1 | grep -v "regs  stack/spill"
  rc=${PIPESTATUS[0]}; echo "gpu-check rc $rc"; [ "$rc" = 0 ] || status=1
  if [ "${PY:-0}" = 1 ]; then
    echo "=== python-check.sh"
    OUT=$W/py timeout -k 10 "${PY_TIMEOUT:-240}" bash scripts/python-check.sh > "$W/python-check.txt" 2>&1
    rc=$?; grep -E "passed|failed|error|SKIPPED|python-check" "$W/python-check.txt" | tail -15
    echo "python-check rc $rc"; [ "$rc" = 0 ] || status=1
  fi
  if [ "${PEERS:-0}" = 1 ]; then
    echo "=== bench-python.sh"
    OUT=$W/bench timeout -k 10 "${PEERS_TIMEOUT:-420}" bash scripts/bench-python.sh > "$W/bench-python.txt" 2>&1
    rc=$?; tail -30 "$W/bench-python.txt"; echo "bench-python rc $rc"; [ "$rc" = 0 ] || status=1
  fi
  echo "session-gpu.sh status $status"
  echo "$status" > "$W/status"
} 2>&1 | tee "$W/summary.txt"
status=$(cat "$W/status" 2>/dev/null || echo 1)
rm -f "$W/status"
cp "$W/summary.txt" "$OUT/"
for f in check/bench.json py/pytest.log bench/peers.json bench/peers.png bench/e2e.json; do
  [ -f "$W/$f" ] && cp "$W/$f" "$OUT/"
done
tar czf "$OUT/logs.tgz" -C "$W" .
rm -rf "$W"
exit "$status"
