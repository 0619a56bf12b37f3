#!/usr/bin/env bash
# GPU machine, one call: a backward kernel change against the previous build, from prebuilt
# binaries (bins.tgz: bins/base/dash-attn and bins/new/{dash-attn,dash_gpu_tests}).
# 1. the backward GPU tests of `new` (TEST_FILTER) in 4 shards; SANITIZE=1: memcheck / racecheck /
#    synccheck of the Sanitize tests alongside;
# 2. A/B base / new interleaved (scripts/gpu-binary-ab.sh: ROUNDS, HDIMS, SCHEDULES);
# 3. bits: grad_hash of every deterministic row equal over both builds and every round.
# Twelfth session: the late-i change (hdim 128); the third Q/dO stage (211542a) ran with the
# same steps as scripts/gpu-bwd-qdo3.sh (in that commit).
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
BINS="base=bins/base/dash-attn new=bins/new/dash-attn" SUITE= ROUNDS=${ROUNDS:-3} HDIMS=${HDIMS:-128 64} \
  SCHEDULES=${SCHEDULES:-descending,atomic,spt} OUT="$OUT" bash scripts/gpu-binary-ab.sh
python3 - "$OUT" <<'PY' | tee "$OUT/bits.txt"
import glob, json, sys
out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(f"{out}/ab-r*-*-hdim*.json")):
    v = f.split("/")[-1].split("-")[2]
    for e in json.load(open(f)):
        if e["schedule"] == "atomic": continue
        rows.setdefault((e["hdim"], e["causal"], e["seqlen"], e["schedule"]), {}).setdefault(v, set()).add(e["grad_hash"])
same = diff = 0
for k, d in sorted(rows.items()):
    hs = set().union(*d.values())
    if len(hs) == 1 and len(d) == 2: same += 1
    else: diff += 1; print("DIFFERS", k, d)
print(f"bits: {same} deterministic rows equal over base/new and rounds, {diff} differ")
PY
echo "total $(el)"
