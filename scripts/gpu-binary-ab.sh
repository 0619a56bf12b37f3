#!/usr/bin/env bash
# GPU machine, one call: `dash-attn bench` of several builds of the kernels, interleaved, with the
# forward and backward speed of each against the first (ab.txt); optionally the GPU suite of one
# build first and pytest last. Used for the exp2 split (docs/perf.md v11 item 2): at 76df857 with
# BINS="base=build/dash-attn e2=build-e2/dash-attn e4=build-e4/dash-attn e8=build-e8/dash-attn"
# SUITE=build-e2/tests/dash_gpu_tests ROUNDS=2, at fc7da02 with
# BINS="base=build-base/dash-attn new=build/dash-attn" ROUNDS=3 PYTEST=1 (there named
# gpu-exp2.sh / gpu-exp2-confirm.sh).
#   BINS       name=path of each dash-attn binary; the first is the reference (default: base=build-base/dash-attn new=build/dash-attn)
#   SUITE      a dash_gpu_tests binary to run first in 4 shards (default build/tests/dash_gpu_tests; empty: none)
#   ROUNDS (2), HDIMS (128 64), SCHEDULES (descending,atomic), PYTEST (0; 1: pip install + pytest tests/python)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-binary-ab-logs}; mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "($(( $(date +%s) - T0 )) s)"; }
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
BINS=${BINS:-base=build-base/dash-attn new=build/dash-attn}
SUITE=${SUITE-build/tests/dash_gpu_tests}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; cat COMMIT 2>/dev/null; echo "BINS=$BINS"; } > "$OUT/machine.txt"
pip_pid=
if [ "${PYTEST:-0}" = 1 ]; then
  (python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log") &
  pip_pid=$!
fi
if [ -n "$SUITE" ]; then
  echo "== suite of $SUITE $(el)"
  bash scripts/gpu-suite-shards.sh "$SUITE" "$OUT" 300
fi
echo "== A/B $(el)"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for nb in $BINS; do
    for d in ${HDIMS:-128 64}; do
      timeout -k 5 100 "${nb#*=}" bench --hdim "$d" --schedules "${SCHEDULES:-descending,atomic}" \
        --json "$OUT/ab-r$round-${nb%%=*}-hdim$d.json" > "$OUT/ab-r$round-${nb%%=*}-hdim$d.log" 2>&1 || echo "bench ${nb%%=*} hdim $d rc $?"
    done
  done
done
python3 - "$OUT" $(for nb in $BINS; do echo "${nb%%=*}"; done) <<'PY' | tee "$OUT/ab.txt"
import glob, json, statistics, sys
out, names = sys.argv[1], sys.argv[2:]
best = {}  # (name, hdim, causal, seqlen, schedule) -> (min fwd ms, min bwd ms) over the rounds
for v in names:
    for f in glob.glob(f"{out}/ab-r*-{v}-hdim*.json"):
        for e in json.load(open(f)):
            k = (v, e["hdim"], bool(e["causal"]), e["seqlen"], e["schedule"])
            fw, bw = best.get(k, (9e9, 9e9))
            best[k] = (min(fw, e["fwd_ms"]), min(bw, e["bwd_ms"]))
ref = names[0]
for v in names[1:]:
    for d in sorted({k[1] for k in best}, reverse=True):
        rows = sorted(k[1:] for k in best if k[0] == ref and k[1] == d and (v,) + k[1:] in best)
        if not rows:
            continue
        rf = [best[(ref,) + r][0] / best[(v,) + r][0] for r in rows]
        rb = [best[(ref,) + r][1] / best[(v,) + r][1] for r in rows]
        print(f"{v} / {ref}, hdim {d}: speed fwd geomean {statistics.geometric_mean(rf):.3f} (min {min(rf):.3f} max {max(rf):.3f})"
              f"  bwd geomean {statistics.geometric_mean(rb):.3f} (min {min(rb):.3f} max {max(rb):.3f})  rows {len(rows)}")
        for r, a, b in zip(rows, rf, rb):
            print(f"   {'causal' if r[1] else 'full':6} {r[2]:6} {r[3]:10}  fwd {best[(ref,) + r][0]:7.3f} -> {best[(v,) + r][0]:7.3f} ({a:.3f})"
                  f"  bwd {best[(ref,) + r][1]:7.3f} -> {best[(v,) + r][1]:7.3f} ({b:.3f})")
PY
if [ -n "$pip_pid" ]; then
  wait "$pip_pid"; tail -1 "$OUT/pip.log"
  echo "== pytest $(el)"
  timeout -k 5 150 python -m pytest -q -rs tests/python > "$OUT/pytest.log" 2>&1; echo "pytest: $(tail -1 "$OUT/pytest.log")"
fi
echo "total $(el)"
