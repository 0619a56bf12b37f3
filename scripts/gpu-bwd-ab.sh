#!/usr/bin/env bash
# GPU machine, one call: a backward kernel change against the previous build, from prebuilt
# binaries (bins.tgz: bins/base/dash-attn and bins/new/{dash-attn,dash_gpu_tests}; BINS="name=path
# ..." for more builds, the first the reference).
# 1. the backward GPU tests of `new` (TEST_FILTER) in 4 shards; SANITIZE=1: memcheck / racecheck /
#    synccheck of the Sanitize tests alongside;
# 2. A/B base / new interleaved (scripts/gpu-binary-ab.sh: ROUNDS, HDIMS, SCHEDULES);
# 3. bits: grad_hash of every deterministic row equal over the builds and every round (ab_bits.py);
# 4. NORED=1: `new` with DASH_DEBUG_NO_REDUCE=1 (dQ wrong: the writers skip the bulk reduce-add)
#    at hdim 128 against its A/B rows: what the reduce costs the step (nored.txt).
# Twelfth session: the late-i change (hdim 128) and its hdim 64 variant; the first call (a7a4464:
# base/new/pf builds, NORED) ran as scripts/gpu-bwd-looptop.sh and the third Q/dO stage (211542a)
# as scripts/gpu-bwd-qdo3.sh, both in their commits, with these steps.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-bwd-ab-logs}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
[ -d bins ] || tar xzf bins.tgz
echo "== tests $(el)"
pids=()
if [ "${SANITIZE:-0}" = 1 ]; then
  for tool in memcheck racecheck synccheck; do
    (timeout -k 5 240 bash scripts/run_sanitizer.sh $tool bins/new/dash_gpu_tests > "$OUT/sanitizer-$tool.log" 2>&1; echo "rc $?" >> "$OUT/sanitizer-$tool.log") &
    pids+=($!)
  done
fi
GTEST_FILTER=${TEST_FILTER:-'*BwdSm90*:*Determinism*:*DualWriter*'} bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$OUT" 240
for pid in "${pids[@]}"; do wait "$pid"; done
for f in "$OUT"/sanitizer-*.log; do
  [ -e "$f" ] && echo "$(basename "$f" .log): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|^rc' "$f" | tr '\n' ' ' | cut -c1-200)"
done
echo "== A/B $(el)"
BINS=${BINS:-base=bins/base/dash-attn new=bins/new/dash-attn}
BINS="$BINS" SUITE= ROUNDS=${ROUNDS:-3} HDIMS=${HDIMS:-128 64} \
  SCHEDULES=${SCHEDULES:-descending,atomic,spt} OUT="$OUT" bash scripts/gpu-binary-ab.sh
python3 scripts/ab_bits.py "$OUT" "$(echo $BINS | wc -w)" | tee "$OUT/bits.txt"
if [ "${NORED:-0}" = 1 ]; then
  echo "== no reduce (hdim 128) $(el)"
  DASH_DEBUG_NO_REDUCE=1 timeout -k 5 100 bins/new/dash-attn bench --hdim 128 --schedules descending,atomic \
    --json "$OUT/nored-hdim128.json" > "$OUT/nored-hdim128.log" 2>&1 || echo "nored rc $?"
  python3 - "$OUT" <<'PY' | tee "$OUT/nored.txt"
import glob, json, sys
out = sys.argv[1]
nr = {(e["seqlen"], e["causal"], e["schedule"]): e["bwd_ms"] for e in json.load(open(f"{out}/nored-hdim128.json"))}
best = {}
for f in glob.glob(f"{out}/ab-r*-new-hdim128.json"):
    for e in json.load(open(f)):
        k = (e["seqlen"], e["causal"], e["schedule"])
        best[k] = min(best.get(k, 9e9), e["bwd_ms"])
for k in sorted(nr):
    if k in best:
        print(f"no-reduce hdim 128 {'causal' if k[1] else 'full':6} {k[0]:6} {k[2]:10} new {best[k]:.3f} ms, "
              f"without the reduce {nr[k]:.3f} ms ({best[k] / nr[k]:.3f})")
PY
fi
echo "total $(el)"
