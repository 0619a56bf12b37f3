#!/usr/bin/env bash
# GPU machine, one call (2026-12-01, twelfth session): a third Q/dO stage at head_dim 64 in the sm90
# backward, against the 2-stage build (same source with -DDASH_BWD_HD64_QDO_STAGES=2, SASS
# identical to the previous commit's kernels). Binaries prebuilt in bins.tgz:
#   bins/base  dash-attn (2 stages);  bins/new  dash-attn, dash_gpu_tests (3 stages at hdim 64)
# 1. the backward GPU tests of `new` in 4 shards, with memcheck / racecheck / synccheck of the
#    Sanitize tests (both head dims, every schedule) alongside;
# 2. A/B base / new at hdim 64, interleaved (scripts/gpu-binary-ab.sh), ROUNDS rounds;
# 3. bits: grad_hash of every deterministic row equal between base and new over the rounds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-bwd-qdo3-logs}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
[ -d bins ] || tar xzf bins.tgz
echo "== tests and sanitizers $(el)"
pids=()
for tool in memcheck racecheck synccheck; do
  (timeout -k 5 240 bash scripts/run_sanitizer.sh $tool bins/new/dash_gpu_tests > "$OUT/sanitizer-$tool.log" 2>&1; echo "rc $?" >> "$OUT/sanitizer-$tool.log") &
  pids+=($!)
done
GTEST_FILTER='*BwdSm90*:*Determinism*:*DualWriter*' bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$OUT" 240
for pid in "${pids[@]}"; do wait "$pid"; done
for tool in memcheck racecheck synccheck; do
  echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|^rc' "$OUT/sanitizer-$tool.log" | tr '\n' ' ' | cut -c1-200)"
done
echo "== A/B $(el)"
BINS="base=bins/base/dash-attn new=bins/new/dash-attn" SUITE= ROUNDS=${ROUNDS:-3} HDIMS=${HDIMS:-64} \
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
