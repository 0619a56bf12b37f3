#!/usr/bin/env bash
# GPU machine (forty-fourth session; the lean fallback of gpu-next120.sh when little device time is left). .snap as
# there. (1) the head-block and atomic-accuracy GPU tests; (2) 2 interleaved rounds of `dash-attn bench` of every
# schedule, atomic and auto at 8k / 16k, both masks, both head dims (the head block and tile that ran); then best
# deterministic / atomic per point (min time of the rounds).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next119
main() {
  cat "$O/machine.txt"
  timeout -k 5 90 bins/new/dash_gpu_tests --gtest_filter='BwdSm90HeadBlock.*:*AtomicModeAccurate*' > "$O/tests.log" 2>&1
  echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/tests.log" | head
  for r in 1 2; do
    for d in 128 64; do
      timeout -k 5 80 bins/new/dash-attn bench --hdim $d --causal 1,0 --seqlen 8192,16384 \
        --schedules ascending,spt,descending,shift,symmetric_shift,atomic,auto --json "$O/all-d$d-r$r.json" \
        > "$O/all-d$d-r$r.log" 2>&1 || echo "bench d$d r$r rc $?"
    done
    echo "round $r $(el)"; save
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t, info = {}, {}
for d in (128, 64):
    for r in (1, 2):
        try:
            rows = json.load(open(f"{O}/all-d{d}-r{r}.json"))
        except Exception as e:
            print("missing", d, r, e); continue
        for x in rows:
            k = (d, "causal" if x["causal"] else "full", x["seqlen"])
            t.setdefault(k, {})
            t[k][x["schedule"]] = min(t[k].get(x["schedule"], 1e9), x["bwd_ms"])
            info[k + (x["schedule"],)] = (x["ran"], x["block_m"], x["head_block"], x["bwd_tflops"])
print("point: best deterministic (ms), atomic (ms, tiles, head block), det / atomic, auto / best")
for k, v in sorted(t.items()):
    det = {s: ms for s, ms in v.items() if s not in ("atomic", "auto")}
    b = min(det, key=det.get)
    a = info.get(k + ("atomic",))
    print(k, f"{b} {det[b]:.3f}", f"atomic {v.get('atomic', 0):.3f} {a[1:3] if a else ''}",
          f"{v['atomic'] / det[b]:.3f}" if "atomic" in v else "-", f"{det[b] / v['auto']:.3f}" if "auto" in v else "-")
PY
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
save
