#!/usr/bin/env bash
# GPU machine (nineteenth session): the forward's 176-key tiles with K and V released separately
# (k_empty after the S GEMM, kv_empty after P V; fwd_split_kv_release). Prebuilt binaries
# (bins.tgz; carry [".snap"]); $OUT/all.tgz.
#   1. FwdSm90Bn176 and the default forward's tests; memcheck / racecheck / synccheck of one case;
#   2. `dash-attn bench` forward at hdim 128 full 1k-16k, 3 interleaved rounds: 128 / 176 keys
#      (ping-pong, the default), and 176 without ping-pong at 4k / 16k.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next24
unset DASH_FWD_BN176 DASH_FWD_PINGPONG
{
echo "== tests $(el)"
timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='Shapes/FwdSm90Bn176.*:Shapes/FwdSm90.*:Shapes/FwdSm90PingPong.*' > "$O/fwd-tests.log" 2>&1
echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/fwd-tests.log" | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" "$O/fwd-tests.log" | head -5
DASH_FWD_BN176=1 sanitize_filter 'Shapes/FwdSm90Bn176.*/bf16_d128_full_b2_sq113_sk1000_h8_2' memcheck racecheck synccheck
echo "== bench $(el)"
for r in 1 2 3; do
  for e in 0 1; do
    DASH_FWD_BN176=$e timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 1024,2048,4096,8192,16384 \
      --schedules atomic --json "$O/fwd-bn$e-r$r.json" > /dev/null 2>&1 || echo "bench $e r$r rc $?"
  done
  DASH_FWD_PINGPONG=0 DASH_FWD_BN176=1 timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 4096,16384 \
    --schedules atomic --json "$O/fwd-pp0-bn1-r$r.json" > /dev/null 2>&1 || echo "bench pp0 r$r rc $?"
done
python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
def load(pat):
    t = {}
    for r in (1, 2, 3):
        for row in json.load(open(f"{O}/{pat}-r{r}.json")):
            t.setdefault(row["seqlen"], []).append(row["fwd_ms"])
    return {s: min(v) for s, v in t.items()}
a, b, c = load("fwd-bn0"), load("fwd-bn1"), load("fwd-pp0-bn1")
print("forward hdim 128 full, min of 3 rounds: seqlen  128-key ms  176-key ms  speed 176/128  (176 no ping-pong)")
for s in sorted(a):
    print(f"  {s:6d}  {a[s]:.4f}  {b[s]:.4f}  {a[s] / b[s]:.3f}  {c.get(s, float('nan')):.4f}")
PY
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
