#!/usr/bin/env bash
# GPU machine, one call (2026-12-01, twelfth session): the backward's next-visit hoist and two
# diagnostics, against the previous commit's binary. Binaries come prebuilt in bins.tgz:
#   bins/base  HEAD before the change (0955c1b): dash-attn
#   bins/new   the Q tile of the next step computed under the current step's GEMMs: dash-attn, dash_gpu_tests
#   bins/pf    new + the loader prefetching each step's dq_accum tile into L2 (-DDASH_EXP_DQ_PREFETCH)
# 1. the backward GPU tests of `new` (BwdSm90*, Determinism*, Sanitize-free), 4 shards;
# 2. A/B base / new / pf, interleaved (scripts/gpu-binary-ab.sh), ROUNDS rounds;
# 3. `new` with DASH_DEBUG_NO_REDUCE=1 (dQ wrong: the writers skip the bulk reduce-add) at hdim 128:
#    what the reduce traffic costs the step;
# 4. bits: grad_hash of every deterministic row equal between base, new and pf.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-bwd-looptop-logs}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
[ -d bins ] || tar xzf bins.tgz
echo "== tests $(el)"
GTEST_FILTER='*BwdSm90*:*Determinism*:*DualWriter*' bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$OUT" 200
echo "== A/B $(el)"
BINS="base=bins/base/dash-attn new=bins/new/dash-attn pf=bins/pf/dash-attn" SUITE= ROUNDS=${ROUNDS:-2} \
  OUT="$OUT" bash scripts/gpu-binary-ab.sh
echo "== no reduce (hdim 128) $(el)"
DASH_DEBUG_NO_REDUCE=1 timeout -k 5 100 bins/new/dash-attn bench --hdim 128 --schedules descending,atomic \
  --json "$OUT/nored-hdim128.json" > "$OUT/nored-hdim128.log" 2>&1 || echo "nored rc $?"
python3 - "$OUT" <<'PY' | tee "$OUT/bits-nored.txt"
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
    if len(hs) == 1 and len(d) == 3: same += 1
    else: diff += 1; print("DIFFERS", k, d)
print(f"bits: {same} deterministic rows equal over base/new/pf and rounds, {diff} differ")
try:
    nr = {(e["seqlen"], e["causal"], e["schedule"]): e["bwd_ms"] for e in json.load(open(f"{out}/nored-hdim128.json"))}
    best = {}
    for f in glob.glob(f"{out}/ab-r*-new-hdim128.json"):
        for e in json.load(open(f)):
            k = (e["seqlen"], e["causal"], e["schedule"]); best[k] = min(best.get(k, 9e9), e["bwd_ms"])
    for k in sorted(nr):
        if k in best: print(f"no-reduce hdim 128 {'causal' if k[1] else 'full':6} {k[0]:6} {k[2]:10} new {best[k]:.3f} ms, without the reduce {nr[k]:.3f} ms ({best[k] / nr[k]:.3f})")
except Exception as ex:
    print("no-reduce table failed:", ex)
PY
echo "total $(el)"
