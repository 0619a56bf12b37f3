#!/usr/bin/env bash
# GPU machine: the peers benchmark (bench/peers.py, issue 4) and the transformer-block benchmark
# (bench/e2e_block.py, issue 5) through the PyTorch package, in about 8 minutes.
# Installs dash_attn first (pip install --no-build-isolation --no-deps .) unless its extension
# already imports; the build itself takes minutes (run scripts/python-check.sh beforehand if the
# GPU time is short). Output in $OUT if set (the device tool), else ./bench-logs:
#   machine.txt, pip.log (if installed), peers.log, peers.json, peers.png, e2e.log, e2e.json
# Knobs (environment):
#   PEERS_ARGS  extra/overriding flags for bench/peers.py, e.g. "--seqlens 2048,8192 --hdims 128"
#   E2E_ARGS    extra/overriding flags for bench/e2e_block.py, e.g. "--seqlens 8192"
#   PEERS_BUDGET_S (300) / E2E_BUDGET_S (100): no new shape is started after this many seconds
#   PEERS_ROUNDS (3) x PEERS_REPS (4): timed iterations per implementation and shape, the
#               implementations taking turns round by round (until 9dd59e9: 1 round of 8)
#   SKIP_PEERS=1 / SKIP_E2E=1: leave one out;  PYTHON (python), MAX_JOBS (nproc)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
LOG=${OUT:-$PWD/bench-logs}
mkdir -p "$LOG"
export PATH="/usr/local/cuda/bin:$PATH"
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
export CUBLAS_WORKSPACE_CONFIG=${CUBLAS_WORKSPACE_CONFIG:-:4096:8}
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python}
DASH_COMMIT=$(cat COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)  # COMMIT: a snapshot without .git
export DASH_COMMIT
T0=$(date +%s)

{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1; echo "commit $DASH_COMMIT"
  "$PY" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"
  date -u; } > "$LOG/machine.txt" 2>&1
cat "$LOG/machine.txt"

if (cd /tmp && "$PY" -c "import dash_attn._C" 2>/dev/null); then
  echo "=== dash_attn._C imports: install skipped"
else
  echo "=== pip install --no-build-isolation --no-deps . ($(date +%T))"
  if ! "$PY" -m pip install --no-build-isolation --no-deps -v . > "$LOG/pip.log" 2>&1; then
    tail -40 "$LOG/pip.log"; echo "bench-python: install failed (log: $LOG/pip.log); peers only"
  fi
  echo "install took $(( $(date +%s) - T0 ))s"
fi
(cd /tmp && "$PY" -c "import dash_attn; print('dash_attn', dash_attn.__version__, dash_attn.__file__, 'extension', dash_attn.has_extension())") 2>&1 | tee -a "$LOG/machine.txt"

status=0
if [ "${SKIP_PEERS:-0}" != 1 ]; then
  echo "=== bench/peers.py ($(date +%T))"
  # shellcheck disable=SC2086
  timeout -k 10 390 "$PY" bench/peers.py --warmup 2 --reps "${PEERS_REPS:-4}" --rounds "${PEERS_ROUNDS:-3}" --budget-s "${PEERS_BUDGET_S:-300}" \
      --json "$LOG/peers.json" --png "$LOG/peers.png" ${PEERS_ARGS:-} 2>&1 | tee "$LOG/peers.log"
  rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || { echo "bench-python: peers.py exit $rc"; status=1; }
  if [ "$rc" = 124 ] && [ -f "$LOG/peers.json" ]; then   # killed: draw the partial JSON
    "$PY" - "$LOG/peers.json" "$LOG/peers.png" <<'PYEOF' 2>&1 | tee -a "$LOG/peers.log"
import json, sys
sys.path.insert(0, "bench")
import peers
d = json.load(open(sys.argv[1]))
peers.print_tables(d["results"], d["meta"]["impls"])
peers.draw_png(d["results"], d["meta"]["impls"], sys.argv[2])
PYEOF
  fi
fi
if [ "${SKIP_E2E:-0}" != 1 ]; then
  echo "=== bench/e2e_block.py ($(date +%T))"
  # shellcheck disable=SC2086
  timeout -k 10 200 "$PY" bench/e2e_block.py --warmup 2 --reps 8 --budget-s "${E2E_BUDGET_S:-100}" \
      --json "$LOG/e2e.json" ${E2E_ARGS:-} 2>&1 | tee "$LOG/e2e.log"
  rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || { echo "bench-python: e2e_block.py exit $rc"; status=1; }
fi
echo "bench-python: $(( $(date +%s) - T0 ))s, logs in $LOG, status $status"
exit "$status"
