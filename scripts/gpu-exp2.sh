#!/usr/bin/env bash
# GPU machine, one call (~7 min): the softmax's exp2 partly on the FMA pipe (src/ptx/math.cuh,
# ex2_fma; docs/perf.md v11). Binaries in the snapshot: build/ (the default), build-e2, build-e4,
# build-e8 (every 2nd / 4th / 8th exp2 of the forward and the backward on the FMA pipe,
# -DDASH_{FWD,BWD}_EXP2_FMA_EVERY=N; build-e2 also carries its dash_gpu_tests).
#   1. the GPU suite of the e2 build (the largest share: the accuracy bound is per element) in 4
#      shards, incl. Sm90Primitives.Exp2OnFmaPipeMatchesExp2;
#   2. A/B: `dash-attn bench` base / e2 / e4 / e8 interleaved twice, hdim 128 and 64, schedules
#      descending and atomic; forward and backward ratios per variant (ab.txt).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-exp2-logs}; mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "($(( $(date +%s) - T0 )) s)"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; cat COMMIT 2>/dev/null; } > "$OUT/machine.txt"
VARIANTS=${VARIANTS:-base e2 e4 e8}
bin() { [ "$1" = base ] && echo build/dash-attn || echo "build-$1/dash-attn"; }
echo "== 1. suite of build-e2 $(el)"
for sh in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$sh timeout -k 5 300 build-e2/tests/dash_gpu_tests > "$OUT/gpu-e2-shard$sh.log" 2>&1 &
done
wait
for sh in 0 1 2 3; do echo "shard $sh: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gpu-e2-shard$sh.log" | tr '\n' ' ')"; done
grep -h "^\[  FAILED  \] [A-Z]" "$OUT"/gpu-e2-shard*.log | head
grep -h -A3 "Exp2OnFmaPipe" "$OUT"/gpu-e2-shard*.log | grep -E "OK|FAILED|max_rel" | head -3
echo "== 2. A/B $(el)"
for round in 1 2; do
  for v in $VARIANTS; do
    for d in 128 64; do
      timeout -k 5 100 "$(bin $v)" bench --hdim $d --schedules descending,atomic --json "$OUT/ab-r$round-$v-hdim$d.json" \
        > "$OUT/ab-r$round-$v-hdim$d.log" 2>&1 || echo "bench $v hdim $d rc $?"
    done
  done
done
python3 - "$OUT" $VARIANTS <<'PY' | tee "$OUT/ab.txt"
import json, statistics, sys, glob
out, variants = sys.argv[1], sys.argv[2:]
best = {}  # (variant, hdim, causal, seqlen, schedule) -> (min fwd, min bwd)
for v in variants:
    for f in glob.glob(f"{out}/ab-r*-{v}-hdim*.json"):
        for e in json.load(open(f)):
            k = (v, e["hdim"], e["causal"], e["seqlen"], e["schedule"])
            fw, bw = best.get(k, (9e9, 9e9))
            best[k] = (min(fw, e["fwd_ms"]), min(bw, e["bwd_ms"]))
for v in variants[1:]:
    for d in (128, 64):
        rows = [k[1:] for k in best if k[0] == "base" and k[1] == d and ("base",) + k[1:] in best and (v,) + k[1:] in best]
        rf = [best[("base",) + r][0] / best[(v,) + r][0] for r in rows]
        rb = [best[("base",) + r][1] / best[(v,) + r][1] for r in rows]
        if not rows: continue
        print(f"{v} hdim {d}: speed vs base  fwd geomean {statistics.geometric_mean(rf):.3f} (min {min(rf):.3f} max {max(rf):.3f})"
              f"  bwd geomean {statistics.geometric_mean(rb):.3f} (min {min(rb):.3f} max {max(rb):.3f})  rows {len(rows)}")
print()
print("forward ms (min of rounds, schedule descending rows):")
print("hdim causal seqlen " + " ".join(f"{v:>8}" for v in variants))
for k in sorted(k for k in best if k[0] == "base" and k[4] == "descending"):
    print(f"{k[1]:4} {k[2]:6} {k[3]:6} " + " ".join(f"{best.get((v,) + k[1:], (float('nan'),))[0]:8.3f}" for v in variants))
print("backward ms (min of rounds):")
for k in sorted(k for k in best if k[0] == "base"):
    print(f"{k[1]:4} {k[2]:6} {k[3]:6} {k[4]:10} " + " ".join(f"{best.get((v,) + k[1:], (0, float('nan')))[1]:8.3f}" for v in variants))
PY
echo "total $(el)"
