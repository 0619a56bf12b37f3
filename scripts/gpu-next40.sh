#!/usr/bin/env bash
# GPU machine (written in the twenty-third session for the next one). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked): the early-dV draft of the two-buffer kernel
#          (DASH_BWD_SM90_DQ2_EARLY_DV=1, attn_bwd_sm90.cu kDq2EarlyDv; compile-checked only): its test
#          (bits against the two-buffer kernel, float64 accuracy, reruns, grids, dispatches), the
#          sanitizers on one small launch, then the A/B: hdim 128 full 1k-16k, 2 interleaved rounds
#          of `dash-attn bench` with (a) the defaults, (b) 80 rows forced, two buffers everywhere
#          (DASH_BWD_SM90_DQ2=1), (c) (b) with early dV. If (c) closes the two-buffer kernel's 2-4% on
#          atomic, the next step is two buffers for atomic (and descending where it wins) by default.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next40
unset DASH_BWD_SM90_DQ2 DASH_BWD_SM90_DQ2_EARLY_DV
{
if [ "${PART:-1}" = 1 ]; then
  echo "== test $(el)"
  DASH_TEST_SM90_DRAFT=1 timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='BwdSm90Dq2EarlyDv.*:BwdSm90Dq2.*' > "$O/test-dq2.log" 2>&1
  echo "test rc $?"; grep -E "^\[  (FAILED|     OK|  PASSED)|Failure|Expected|Which is|actual" "$O/test-dq2.log" | head -30
  echo "== sanitizers $(el)"
  for tool in memcheck racecheck synccheck; do
    DASH_BWD_SM90_DQ2_EARLY_DV=1 DASH_BWD_SM90_DQ2=1 DASH_BWD_SM90_BLOCK_M=80 timeout -k 5 100 compute-sanitizer --tool $tool bins/new/dash-attn bench \
      --hdim 128 --causal 0 --seqlen 1000 --batch 1 --heads 4 --kv-heads 2 --schedules descending,shift,atomic --reps 1 \
      > "$O/san-$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
  done
  echo "== A/B $(el)"
  for r in 1 2; do
    for cfg in def bm80 dq2; do
      case $cfg in
        def) envs="" ;;
        bm80) envs="DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1" ;;
        dq2) envs="DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1 DASH_BWD_SM90_DQ2_EARLY_DV=1" ;;
      esac
      env $envs timeout -k 5 90 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 1024,2048,4096,8192,16384 \
        --schedules descending,ascending,spt,shift,atomic --json "$O/ab-$cfg-r$r.json" > "$O/ab-$cfg-r$r.log" 2>&1 || echo "bench $cfg r$r rc $?"
    done
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t = {}
for cfg in ("def", "bm80", "dq2"):
    for r in (1, 2):
        try:
            rows = json.load(open(f"{O}/ab-{cfg}-r{r}.json"))
        except Exception as e:
            print(cfg, r, e); continue
        for row in rows:
            t.setdefault((cfg, row["schedule"], row["seqlen"]), []).append((row["bwd_ms"], row["block_m"], row.get("dq_stage_bufs"), row["bwd_tflops"], row["grad_hash"]))
seqs = sorted({k[2] for k in t})
print("hdim 128 full, TFLOP/s (min-time of 2 rounds) [block_m/bufs]; def = the defaults, bm80 = two buffers on 80 rows everywhere, dq2 = that with early dV; ratios dq2/def, dq2/bm80")
for sc in ("descending", "ascending", "spt", "shift", "atomic"):
    for s in seqs:
        v = {c: min(t[(c, sc, s)]) for c in ("def", "bm80", "dq2") if (c, sc, s) in t}
        if len(v) < 3: continue
        same = "bits= " if sc == "atomic" or v["bm80"][4] == v["dq2"][4] else "BITS DIFFER "
        print(f"{sc:10s} {s:6d} " + "  ".join(f"{c} {v[c][3]:6.1f} [{v[c][1]}/{v[c][2]}]" for c in v) +
              f"   dq2/def {v['def'][0] / v['dq2'][0]:.3f}  dq2/bm80 {v['bm80'][0] / v['dq2'][0]:.3f}  {same}")
best = {}
for s in seqs:
    for c in ("def", "dq2"):
        best[(c, s)] = min((min(t[(c, sc, s)])[0], sc) for sc in ("descending", "ascending", "spt", "shift") if (c, sc, s) in t)
    print(f"best det {s}: def {best[('def', s)][1]} {best[('def', s)][0]:.3f} ms, dq2 {best[('dq2', s)][1]} {best[('dq2', s)][0]:.3f} ms: {best[('def', s)][0] / best[('dq2', s)][0]:.3f}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
