#!/usr/bin/env bash
# GPU machine (twenty-fifth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap: bins/old = the default forward (S = Q K^T as wgmma SS), bins/q1 = Q as
#          register A fragments of the S GEMM (wgmma RS, ldmatrix once per tile, Q released right
#          after; DASH_FWD_Q_REGS=1)): the forward tests of q1, then 3 interleaved rounds of
#          `dash-attn bench` at hdim 64 and 128, full and causal, 1k-16k (normal data): forward time
#          per binary, fwd_hash old vs q1 (the same products, so the same bits expected); then ncu of
#          the hdim 64 / 128 full 8k forward per binary (time, instructions, tensor pipe, clock,
#          shared-memory bank reads).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next52
BINS="old q1"
{
if [ "${PART:-1}" = 1 ]; then
  echo "== forward tests q1 $(el)"
  timeout -k 5 200 bins/q1/dash_gpu_tests --gtest_filter='*FwdSm90*' > "$O/test-fwd-q1.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/test-fwd-q1.log" | head -12
  echo "== A/B $(el)"
  for r in 1 2 3; do
    for b in $BINS; do
      timeout -k 5 120 bins/$b/dash-attn bench --dist normal --hdim 64,128 --causal 0,1 --seqlen 1024,2048,4096,8192,16384 \
        --schedules descending --json "$O/fwd-$b-r$r.json" > "$O/fwd-$b-r$r.log" 2>&1 || echo "bench $b r$r rc $?"
    done
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t = {}
for b in ("old", "q1"):
    for r in (1, 2, 3):
        try:
            rows = json.load(open(f"{O}/fwd-{b}-r{r}.json"))
        except Exception as e:
            print("missing", b, r, e); continue
        for row in rows:
            t.setdefault((b, row["hdim"], row["causal"], row["seqlen"]), []).append((row["fwd_ms"], row["fwd_tflops"], row.get("fwd_hash")))
print("forward TFLOP/s, min time of 3 rounds: old / q1; speed q1 vs old; fwd_hash q1 vs old")
for d in (64, 128):
    for c in (False, True):
        for s in sorted({k[3] for k in t}):
            try:
                o, a = (min(t[(b, d, c, s)]) for b in ("old", "q1"))
            except (KeyError, ValueError):
                continue
            same = {x[2] for x in t[("old", d, c, s)]} == {x[2] for x in t[("q1", d, c, s)]}
            print(f"hdim {d:3d} {'causal' if c else 'full  '} {s:6d}  {o[1]:6.1f} / {a[1]:6.1f}   q1 {o[0] / a[0]:.3f}"
                  f"{'  same bits' if same else '  BITS DIFFER'}")
PY
  echo "== ncu $(el)"
  for b in $BINS; do
    for d in 64 128; do
      timeout -k 5 120 ncu --clock-control none --kernel-name regex:attn_fwd_sm90 --launch-skip 2 --launch-count 1 \
        --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed \
        --csv bins/$b/dash-attn bench --dist normal --hdim $d --causal 0 --seqlen 8192 --schedules descending > "$O/ncu-$b-d$d.csv" 2> "$O/ncu-$b-d$d.err"
      echo "$b hdim $d: $(grep -E 'gpu__time|inst_executed|hmma|per_second|bank' "$O/ncu-$b-d$d.csv" | awk -F'","' '{print $(NF-2)"="$NF}' | tr -d '"' | tr '\n' ' ')"
    done
  done
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
