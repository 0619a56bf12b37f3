#!/usr/bin/env bash
# GPU machine: build and install the PyTorch package (dash_attn) from this checkout, then run the
# pytest suite (tests/python). Logs land in $OUT if set (the device tool), else ./py-logs.
#   MAX_JOBS (default: nproc) parallel compile jobs;  PYTEST_ARGS="-k accuracy" narrows the run.
# Exits non-zero when the install, the extension import or any test fails.
set -uo pipefail
cd "$(dirname "$0")/.."
LOG=${OUT:-$PWD/py-logs}
mkdir -p "$LOG"
export PATH="/usr/local/cuda/bin:$PATH"
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
PY=${PYTHON:-python}

{ nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1; git rev-parse --short HEAD 2>/dev/null
  "$PY" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvcc --version | tail -1; echo "MAX_JOBS=$MAX_JOBS"; date -u; } > "$LOG/machine.txt" 2>&1
cat "$LOG/machine.txt"

echo "=== pip install --no-build-isolation --no-deps -v . ($(date +%T))"
if ! "$PY" -m pip install --no-build-isolation --no-deps -v . > "$LOG/pip.log" 2>&1; then
  tail -80 "$LOG/pip.log"
  echo "python-check: install failed (log: $LOG/pip.log)"
  exit 1
fi
# nvcc must have compiled for sm_90a, and for nothing else.
if grep -q "arch=compute_90a,code=sm_90a" "$LOG/pip.log"; then echo "nvcc: -gencode arch=compute_90a,code=sm_90a"
else echo "python-check: nvcc was not given compute_90a (see $LOG/pip.log)"; exit 1; fi
other=$(grep -oE "arch=compute_[0-9]+[a-z]?" "$LOG/pip.log" | sort -u | grep -v "compute_90a$" || true)
[ -z "$other" ] || echo "warning: other archs on the nvcc command line: $other"
grep -iE "warning" "$LOG/pip.log" | grep -vE "pip|setuptools|deprecat|byte-compiling" | head -20

# Run from a neutral folder so that `import dash_attn` can only find the installed package.
cd /tmp
if ! "$PY" -c "import dash_attn, sys; dash_attn._ops.extension(); print('dash_attn', dash_attn.__version__, 'from', dash_attn.__file__)"; then
  echo "python-check: the installed dash_attn has no working extension"
  exit 1
fi
cd - > /dev/null

echo "=== pytest ($(date +%T))"
"$PY" -m pytest -q -rs --durations=15 tests/python ${PYTEST_ARGS:-} 2>&1 | tee "$LOG/pytest.log"
status=${PIPESTATUS[0]}
echo "python-check: logs in $LOG, pytest status $status"
exit "$status"
