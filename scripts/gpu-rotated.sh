#!/usr/bin/env bash
# GPU machine, one call (~5 min): the rotated-step draft of the hdim 128 backward
# (DASH_BWD_ROTATED_STEP=1; docs/bwd-sm90.md "S^T prefetch"; compiled, ptxas-clean and SASS-checked
# in the ninth session, not yet run).
#   1. its bits tests (BwdSm90RotatedStep.*), then racecheck and synccheck on the Sanitize test
#      with it exported, then the BwdSm90 tests with it exported (timeout 240 s);
#   2. `dash-attn bench` off / on, interleaved twice (A B A B), hdim 128, spt / descending /
#      atomic; the deterministic rows' grad_hash must match between off and on.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-rotated-logs}; mkdir -p "$OUT"
B=${BUILD_DIR:-build}; T0=$(date +%s)
el() { echo "($(( $(date +%s) - T0 )) s)"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; cat COMMIT 2>/dev/null; } > "$OUT/machine.txt"
timeout -k 5 150 "$B/tests/dash_gpu_tests" --gtest_filter='BwdSm90RotatedStep.*' > "$OUT/test-rotated.log" 2>&1
echo "bits tests rc $? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test-rotated.log" | tr '\n' ' ') $(el)"
for tool in racecheck synccheck; do
  DASH_BWD_ROTATED_STEP=1 timeout -k 5 120 bash scripts/run_sanitizer.sh $tool "$B/tests/dash_gpu_tests" > "$OUT/rotated-$tool.log" 2>&1
  echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/rotated-$tool.log" | tr '\n' ' ' | cut -c1-160)"
done
DASH_BWD_ROTATED_STEP=1 timeout -k 5 240 "$B/tests/dash_gpu_tests" --gtest_filter='*BwdSm90*' > "$OUT/suite-rotated.log" 2>&1
echo "BwdSm90 suite with it rc $? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/suite-rotated.log" | tr '\n' ' ') $(el)"
for round in 1 2; do
  for v in 0 1; do
    DASH_BWD_ROTATED_STEP=$v timeout -k 5 100 "$B/dash-attn" bench --hdim 128 --schedules spt,descending,atomic \
      --json "$OUT/ab-r$round-v$v.json" > "$OUT/ab-r$round-v$v.log" 2>&1
  done
done
python - "$OUT" <<'PY' | tee "$OUT/ab.txt"
import json, statistics, sys
out = sys.argv[1]
rows = {}
for r in (1, 2):
    for v in (0, 1):
        for e in json.load(open(f"{out}/ab-r{r}-v{v}.json")):
            rows.setdefault((e["causal"], e["seqlen"], e["schedule"]), {}).setdefault(v, []).append(e)
ratios, bad = [], 0
for k, vv in sorted(rows.items()):
    a, b = min(e["bwd_ms"] for e in vv[0]), min(e["bwd_ms"] for e in vv[1])
    ratios.append(a / b)
    same = k[2] == "atomic" or {e["grad_hash"] for e in vv[0]} == {e["grad_hash"] for e in vv[1]}
    bad += not same
    print(f"{'causal' if k[0] else 'full':6} {k[1]:6} {k[2]:11} off {a:7.3f} ms  on {b:7.3f} ms  on/off speed {a / b:.3f}{'' if same else '  BITS DIFFER'}")
print(f"geomean speed on/off {statistics.geometric_mean(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}); rows with different bits: {bad}")
PY
echo "total $(el)"
