#!/usr/bin/env bash
# GPU machine, one call (~6 min): a kernel build against the previous one (BASE binary), and the
# PyTorch package's host path. Ran at a517245 for the S^T prefetch (docs/perf.md v10 item 3,
# since reverted); reusable for any new-vs-base A/B that must keep the bits.
#   BASE: a dash-attn binary of the commit before (build-base/dash-attn in the snapshot).
#   0. bits: `dash-attn bench` of both binaries, every schedule, hdim 64/128, causal/full, 1k/4k:
#      the gradients' hash (grad_hash) of each deterministic row must be equal (same GEMMs).
#   1. the GPU test suite in 4 shards at once (timeout 300 s), then memcheck / racecheck /
#      synccheck on the Sanitize test (scripts/run_sanitizer.sh); pip install in the background.
#   2. A/B: `dash-attn bench` new vs base, interleaved twice (A B A B), both head dims,
#      schedules spt, descending, atomic.
#   3. host time per call (bench/host_overhead.py, the training call: GQA 6/2, schedule auto) and
#      the package's GPU tests (pytest tests/python).
#   4. the training-step A/B on this GPU with clocks logged (scripts/gpu-step-clocks.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-prefetch-logs}; mkdir -p "$OUT"
B=${BUILD_DIR:-build}; BASE=${BASE:-build-base/dash-attn}; T0=$(date +%s)
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
el() { echo "($(( $(date +%s) - T0 )) s)"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; cat COMMIT 2>/dev/null; } > "$OUT/machine.txt"
(python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
pip_pid=$!
echo "== 0. bits, new vs base"
for bin in new base; do
  X=$B/dash-attn; [ $bin = base ] && X=$BASE
  timeout -k 5 120 "$X" bench --hdim 128,64 --causal 0,1 --seqlen 1024,4096 --reps 2 \
    --schedules ascending,spt,descending,shift,symmetric_shift,atomic --json "$OUT/bits-$bin.json" > "$OUT/bits-$bin.log" 2>&1
  echo "$bin rc $?"
done
python - "$OUT/bits-new.json" "$OUT/bits-base.json" <<'PY' | tee "$OUT/bits.txt"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
key = lambda r: (r["hdim"], r["causal"], r["seqlen"], r["schedule"])
bb = {key(r): r for r in b}
same = diff = 0
for r in a:
    if r["schedule"] == "atomic": continue
    o = bb.get(key(r))
    if o is None: continue
    if r["grad_hash"] == o["grad_hash"]: same += 1
    else: diff += 1; print("DIFFERS", key(r), r["grad_hash"], o["grad_hash"])
print(f"bits: {same} deterministic rows equal, {diff} differ")
PY
echo "== 1. tests $(el)"
bash scripts/gpu-suite-shards.sh "$B/tests/dash_gpu_tests" "$OUT" 300
for tool in memcheck racecheck synccheck; do
  timeout -k 5 150 bash scripts/run_sanitizer.sh $tool "$B/tests/dash_gpu_tests" > "$OUT/sanitizer-$tool.log" 2>&1
  echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/sanitizer-$tool.log" | tr '\n' ' ' | cut -c1-160)"
done
echo "== 2. A/B $(el)"
for round in 1 2; do
  for bin in new base; do
    X=$B/dash-attn; [ $bin = base ] && X=$BASE
    for d in 128 64; do
      timeout -k 5 100 "$X" bench --hdim $d --schedules spt,descending,atomic --json "$OUT/ab-r$round-$bin-hdim$d.json" \
        > "$OUT/ab-r$round-$bin-hdim$d.log" 2>&1
    done
  done
done
echo "A/B done $(el)"
wait $pip_pid; tail -1 "$OUT/pip.log"
echo "== 3. host path $(el)"
timeout -k 5 90 python bench/host_overhead.py --schedule auto --json "$OUT/host.json" > "$OUT/host.log" 2>&1; echo "host_overhead rc $?"; tail -5 "$OUT/host.log"
timeout -k 5 150 python -m pytest -q -rs tests/python > "$OUT/pytest.log" 2>&1; echo "pytest: $(tail -1 "$OUT/pytest.log")"
echo "== 4. training step A/B with clocks (1 GPU) $(el)"
ATTNS=${ATTNS:-dash,dash_op,sdpa_cudnn,sdpa_detmode} BLOCKS=${BLOCKS:-8} OUT=$OUT/clocks timeout -k 5 200 \
  bash scripts/gpu-step-clocks.sh | tail -7
echo "total $(el)"
