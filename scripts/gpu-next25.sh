#!/usr/bin/env bash
# GPU machine (nineteenth session): K / V released separately in EVERY forward kernel (the 128-key
# ones too), against the build without it. bins.tgz holds bins/new (split everywhere) and
# bins/old/dash-attn (split only at 176 keys, 82703d9). carry [".snap"]; $OUT/all.tgz.
#   1. the forward's tests (every suite) with bins/new; racecheck / synccheck of two cases;
#   2. `dash-attn bench` forward, old / new interleaved, 3 rounds: hdim 128 and 64, full and causal,
#      1k-16k (schedule atomic; the forward's time is what is compared).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next25
unset DASH_FWD_BN176 DASH_FWD_PINGPONG
{
echo "== tests $(el)"
timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='Shapes/FwdSm90*' > "$O/fwd-tests.log" 2>&1
echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/fwd-tests.log" | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" "$O/fwd-tests.log" | head -5
sanitize_filter 'Shapes/FwdSm90.*/bf16_d128_full_b1_sq1000_sk1000_h8_2:Shapes/FwdSm90.*/bf16_d64_causal_b2_sq113_sk113_h4_1' racecheck synccheck
echo "== bench $(el)"
for r in 1 2 3; do
  for v in old new; do
    for d in 128 64; do
      for c in 0 1; do
        timeout -k 5 60 bins/$v/dash-attn bench --hdim $d --causal $c --seqlen 1024,2048,4096,8192,16384 \
          --schedules atomic --json "$O/f-$v-d$d-c$c-r$r.json" > /dev/null 2>&1 || echo "bench $v $d $c r$r rc $?"
      done
    done
  done
done
python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
def load(v, d, c):
    t = {}
    for r in (1, 2, 3):
        for row in json.load(open(f"{O}/f-{v}-d{d}-c{c}-r{r}.json")):
            t.setdefault(row["seqlen"], []).append(row["fwd_ms"])
    return {s: min(x) for s, x in t.items()}
print("forward, min of 3 rounds, old / new time (> 1: split K/V release faster)")
for d in (128, 64):
    for c in (0, 1):
        a, b = load("old", d, c), load("new", d, c)
        print(f"  hdim {d:3d} {'causal' if c else 'full  '}: " + "  ".join(f"{s}: {a[s]:.4f}/{b[s]:.4f} {a[s] / b[s]:.3f}" for s in sorted(a)))
PY
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
