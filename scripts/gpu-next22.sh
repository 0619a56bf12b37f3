#!/usr/bin/env bash
# GPU machine (nineteenth session): the forward's 176-key tiles (DASH_FWD_BN176=1, head_dim 128 full
# masks, docs/fwd-sm90.md "176-key tiles"), first run. Prebuilt binaries as in gpu-next20.sh
# (bins.tgz; carry [".snap"]); everything goes into $OUT/all.tgz.
#   1. FwdSm90Bn176 (accuracy against sm80 / float64 / the low-precision bound, reruns, every grid)
#      and the default forward's tests; memcheck and racecheck of one BN176 case each;
#   2. `dash-attn bench` forward, hdim 128 full 1k-16k, 3 interleaved rounds of 128 / 176 keys;
#   3. pip install, then scripts/fwd_pair.py (dash / cuDNN forward, alternating blocks in one process)
#      with the 128- and with the 176-key tiles.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next22
unset DASH_FWD_BN176
{
echo "== tests $(el)"
timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='Shapes/FwdSm90Bn176.*:Shapes/FwdSm90.*' > "$O/fwd-tests.log" 2>&1
echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/fwd-tests.log" | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" "$O/fwd-tests.log" | head -5
DASH_FWD_BN176=1 sanitize_filter 'Shapes/FwdSm90Bn176.*/bf16_d128_full_b2_sq113_sk1000_h8_2' memcheck racecheck
echo "== bench $(el)"
for r in 1 2 3; do
  for e in 0 1; do
    DASH_FWD_BN176=$e timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 1024,2048,4096,8192,16384 \
      --schedules atomic --json "$O/fwd-bn$e-r$r.json" > "$O/fwd-bn$e-r$r.log" 2>&1 || echo "bench $e r$r rc $?"
  done
done
python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t = {}
for e in (0, 1):
    for r in (1, 2, 3):
        for row in json.load(open(f"{O}/fwd-bn{e}-r{r}.json")):
            t.setdefault((e, row["seqlen"]), []).append(row["fwd_ms"])
print("forward hdim 128 full, min of 3 rounds: seqlen  128-key ms  176-key ms  speed 176/128")
for s in (1024, 2048, 4096, 8192, 16384):
    a, b = min(t[(0, s)]), min(t[(1, s)])
    print(f"  {s:6d}  {a:.4f}  {b:.4f}  {a / b:.3f}")
PY
echo "== pip $(el)"
python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $?"
for e in 0 1; do
  echo "== fwd_pair DASH_FWD_BN176=$e $(el)"
  DASH_FWD_BN176=$e timeout -k 5 120 python3 scripts/fwd_pair.py --seqlen 1024,2048,4096,8192,16384 2>&1 | grep -v Warning | tee "$O/fwd-pair-bn$e.log"
done
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
