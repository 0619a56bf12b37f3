#!/usr/bin/env bash
# GPU machine, one call (~6 min): the exp2 split as chosen from scripts/gpu-exp2.sh (every 4th
# exp2 on the FMA pipe in the forward at head_dim 64 and the backward at 128; docs/perf.md v11)
# against the binary before it (BASE, default build-base/dash-attn: MUFU only).
#   1. the GPU suite (4 shards) with the package installing in the background;
#   2. A/B `dash-attn bench` new / base interleaved three times, hdim 128 and 64, descending and
#      atomic (ab.txt: forward and backward geomean per head dim);
#   3. pytest tests/python if the call is still under 6 minutes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-exp2-confirm-logs}; mkdir -p "$OUT"
B=${BUILD_DIR:-build}; BASE=${BASE:-build-base/dash-attn}; T0=$(date +%s)
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
el() { echo "($(( $(date +%s) - T0 )) s)"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; cat COMMIT 2>/dev/null; } > "$OUT/machine.txt"
(python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
pip_pid=$!
echo "== 1. suite $(el)"
for sh in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$sh timeout -k 5 300 "$B/tests/dash_gpu_tests" > "$OUT/gpu-shard$sh.log" 2>&1 &
done
wait $(jobs -p | grep -v "^$pip_pid$") 2>/dev/null
for sh in 0 1 2 3; do echo "shard $sh: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gpu-shard$sh.log" | tr '\n' ' ')"; done
grep -h "^\[  FAILED  \] [A-Z]" "$OUT"/gpu-shard*.log | head
echo "== 2. A/B $(el)"
for round in 1 2 3; do
  for v in new base; do
    X=$B/dash-attn; [ $v = base ] && X=$BASE
    for d in 128 64; do
      timeout -k 5 100 "$X" bench --hdim $d --schedules descending,atomic --json "$OUT/ab-r$round-$v-hdim$d.json" \
        > "$OUT/ab-r$round-$v-hdim$d.log" 2>&1 || echo "bench $v hdim $d rc $?"
    done
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import json, statistics, sys, glob
out = sys.argv[1]
best = {}
for v in ("new", "base"):
    for f in glob.glob(f"{out}/ab-r*-{v}-hdim*.json"):
        for e in json.load(open(f)):
            k = (v, e["hdim"], bool(e["causal"]), e["seqlen"], e["schedule"])
            fw, bw = best.get(k, (9e9, 9e9))
            best[k] = (min(fw, e["fwd_ms"]), min(bw, e["bwd_ms"]))
for d in (128, 64):
    rows = sorted(k[1:] for k in best if k[0] == "base" and k[1] == d and ("new",) + k[1:] in best)
    rf = [best[("base",) + r][0] / best[("new",) + r][0] for r in rows]
    rb = [best[("base",) + r][1] / best[("new",) + r][1] for r in rows]
    print(f"hdim {d}: speed new / base  fwd geomean {statistics.geometric_mean(rf):.3f} (min {min(rf):.3f} max {max(rf):.3f})"
          f"  bwd geomean {statistics.geometric_mean(rb):.3f} (min {min(rb):.3f} max {max(rb):.3f})  rows {len(rows)}")
    for r, a, b in zip(rows, rf, rb):
        print(f"   {'causal' if r[1] else 'full':6} {r[2]:6} {r[3]:10}  fwd {best[('base',) + r][0]:7.3f} -> {best[('new',) + r][0]:7.3f} ({a:.3f})"
              f"  bwd {best[('base',) + r][1]:7.3f} -> {best[('new',) + r][1]:7.3f} ({b:.3f})")
PY
wait $pip_pid; tail -1 "$OUT/pip.log"
if [ $(( $(date +%s) - T0 )) -lt 360 ]; then
  echo "== 3. pytest $(el)"
  timeout -k 5 150 python -m pytest -q -rs tests/python > "$OUT/pytest.log" 2>&1; echo "pytest: $(tail -1 "$OUT/pytest.log")"
fi
echo "total $(el)"
