#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap: bins/new = this commit, bins/old = the build before the tree max): the
#          forward's row max as a tree of four partial maxima per row (attn_fwd_sm90.cu
#          softmax_block; same bits by construction). ncu at hdim 64 (gpu-next45.sh) showed the
#          max as one serial FMNMX chain of 32 per row on every key block's critical path. The
#          forward tests (its first run matched none: the filter lacked the parameterised prefix; float64 reference, ping-pong / persistent / fp16 / 176-key bits), then
#          2 interleaved rounds of old / new `dash-attn bench` (normal data, descending) at hdim
#          128 and 64, full and causal, 1k-16k: forward time old / new, and grad_hash equal
#          (the backward reads O and LSE: any changed forward bit changes it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next46
{
if [ "${PART:-1}" = 1 ]; then
  echo "== forward tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='*FwdSm90*' > "$O/test-fwd.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure" "$O/test-fwd.log" | head -12
  echo "== A/B $(el)"
  for r in 1 2; do
    for b in old new; do
      timeout -k 5 120 bins/$b/dash-attn bench --dist normal --hdim 128,64 --causal 0,1 --seqlen 1024,2048,4096,8192,16384 \
        --schedules descending --json "$O/fwd-$b-r$r.json" > "$O/fwd-$b-r$r.log" 2>&1 || echo "bench $b r$r rc $?"
    done
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t = {}
for b in ("old", "new"):
    for r in (1, 2):
        for row in json.load(open(f"{O}/fwd-{b}-r{r}.json")):
            t.setdefault((b, row["hdim"], row["causal"], row["seqlen"]), []).append((row["fwd_ms"], row["fwd_tflops"], row["grad_hash"], row.get("fwd_hash")))
print("forward TFLOP/s old -> new (min time of 2 rounds), old / new time; grad_hash old == new")
for d in (128, 64):
    for c in (False, True):
        line = f"hdim {d:3d} {'causal' if c else 'full  '}"
        for s in sorted({k[3] for k in t if k[1] == d}):
            o, n = min(t[("old", d, c, s)]), min(t[("new", d, c, s)])
            same = {x[2] for x in t[("old", d, c, s)]} == {x[2] for x in t[("new", d, c, s)]} and len({x[2] for x in t[("new", d, c, s)]}) == 1
            line += f"  {s}: {o[1]:5.1f}->{n[1]:5.1f} {o[0] / n[0]:.3f}{'' if same else ' BITS DIFFER'}"
        print(line)
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
