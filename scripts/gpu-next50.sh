#!/usr/bin/env bash
# GPU machine (twenty-fifth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = the default build; head.tgz = a clean export of HEAD without docs/data):
#          the new forward test on large growing logits (FwdSm90GrowingMaxima) with the default
#          kernels; the package; pytest of the peers dry run (the forward-only phase); then the
#          standard peers sweep (3 rounds, warmup 2, reps 4, budget 300 s) with the forward-only
#          phase (5 rounds of 2 + 10 forwards per forward kernel) and scripts/peers_table.py.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next50
{
if [ "${PART:-1}" = 1 ]; then
  echo "== growing-maxima test (default kernels) $(el)"
  timeout -k 5 120 bins/new/dash_gpu_tests --gtest_filter='*FwdSm90GrowingMaxima*' > "$O/test-growing.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/test-growing.log" | head -12
  mkdir -p /tmp/h && tar xzf head.tgz -C /tmp/h && cd /tmp/h || exit 1
  echo "== pip $(el)"
  python -m pip install --no-build-isolation --no-deps . > "$O/pip.log" 2>&1; echo "pip rc $? $(el)"
  timeout -k 5 120 python -m pytest -q tests/python/test_examples.py -k peers > "$O/pytest-peers.log" 2>&1
  echo "pytest rc $? $(tail -1 "$O/pytest-peers.log") $(el)"
  R=$PWD; cd /tmp || exit 1
  timeout -k 5 400 python "$R/bench/peers.py" --rounds 3 --warmup 2 --reps 4 --budget-s 300 \
    --json "$O/peers.json" --png "$O/peers.png" > "$O/peers.log" 2>&1; echo "peers rc $? $(el)"
  python3 "$R/scripts/peers_table.py" "$O/peers.json" > "$O/table.md" 2>&1; tail -28 "$O/table.md"
  python3 - "$O/peers.json" <<'PY'
import json, sys, statistics
d = json.load(open(sys.argv[1]))
print("forward ms at hdim 128 full: the forward-only phase (min / median / max) and in the rounds (min / median / max)")
for x in d["results"]:
    if x["hdim"] != 128 or x["mask"] != "full":
        continue
    for n in ("cudnn", "dash:auto"):
        v = x["impls"].get(n, {})
        a, b = v.get("fwd_phase_ms_all") or [0], v.get("fwd_ms_all") or [0]
        print(f"  {x['seqlen']:6d} {n:10s} phase {min(a):.3f} / {statistics.median(a):.3f} / {max(a):.3f}   "
              f"rounds {min(b):.3f} / {statistics.median(b):.3f} / {max(b):.3f}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
