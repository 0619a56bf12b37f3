#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap: bins/old = the kernels of a72dbe9, bins/new = a 4-stage K/V ring in the
#          head_dim 64 ping-pong forward (DASH_FWD_STAGES_HD64=4; 144 KiB of shared memory, cuDNN's
#          kernel holds 134), bins/n0 = the same with every softmax exp2 on MUFU (built with
#          -DDASH_FWD_EXP2_FMA_EVERY_HD64=0; different bits by design)): the forward tests of
#          bins/new, then 2 interleaved rounds of `dash-attn bench` at hdim 64 full and causal
#          1k-16k (normal data): forward time per binary, grad_hash old == new.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next47
{
if [ "${PART:-1}" = 1 ]; then
  echo "== forward tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='*FwdSm90*' > "$O/test-fwd.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/test-fwd.log" | head -12
  echo "== A/B $(el)"
  for r in 1 2; do
    for b in old new n0; do
      timeout -k 5 120 bins/$b/dash-attn bench --dist normal --hdim 64 --causal 0,1 --seqlen 1024,2048,4096,8192,16384 \
        --schedules descending --json "$O/fwd-$b-r$r.json" > "$O/fwd-$b-r$r.log" 2>&1 || echo "bench $b r$r rc $?"
    done
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t = {}
for b in ("old", "new", "n0"):
    for r in (1, 2):
        for row in json.load(open(f"{O}/fwd-{b}-r{r}.json")):
            t.setdefault((b, row["causal"], row["seqlen"]), []).append((row["fwd_ms"], row["fwd_tflops"], row["grad_hash"]))
print("hdim 64 forward TFLOP/s, min time of 2 rounds: old / new (4 stages) / n0 (4 stages, MUFU only); speed vs old")
for c in (False, True):
    for s in sorted({k[2] for k in t}):
        o, n, z = (min(t[(b, c, s)]) for b in ("old", "new", "n0"))
        same = {x[2] for x in t[("old", c, s)]} == {x[2] for x in t[("new", c, s)]}
        print(f"{'causal' if c else 'full  '} {s:6d}  {o[1]:6.1f} / {n[1]:6.1f} / {z[1]:6.1f}   new {o[0] / n[0]:.3f}  n0 {o[0] / z[0]:.3f}"
              f"{'' if same else '  BITS DIFFER (new)'}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
