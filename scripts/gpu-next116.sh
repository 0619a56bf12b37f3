#!/usr/bin/env bash
# GPU machine (forty-fourth session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests). Atomic with late
# task taking (docs/perf.md v45): the non-deterministic mode ran the run-ahead taker (up to two tasks held per CTA), and
# causal atomic sat at 0.71-0.84x of descending's identical visits (next108). Now atomic takes late by default;
# DASH_BWD_ATOMIC_TAKE_LATE=0 is the old taker. (1) the atomic / take-late / take-ahead GPU tests and synccheck /
# racecheck on atomic launches; (2) 2 interleaved rounds of `dash-attn bench`, hdim 128 and 64, causal and full,
# 2k-16k: atomic with the switch off (old), on (new), on with DASH_HEAD_BLOCK=8 (hb8), descending (desc) and shift with
# DASH_DEBUG_UNORDERED=1 (ushift: what atomic would run with shift's visits); then speed ratios (min of the rounds):
# new / old, hb8 / new, new / desc, ushift / new.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next116
main() {
  cat "$O/machine.txt"
  echo "== tests $(el)"
  timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='*atomic*:*Atomic*:BwdSm90TakeLate.*:BwdSm90TakeAhead.*' \
    > "$O/tests.log" 2>&1; echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED)|tests ran|FAILED  \]|SKIPPED \]" "$O/tests.log" | head -20
  for tool in synccheck racecheck; do
    for c in 1 0; do
      timeout -k 5 100 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 128 --causal $c --seqlen 1000 --batch 2 \
        --heads 4 --kv-heads 2 --schedules atomic --reps 1 > "$O/san-$tool-c$c.log" 2>&1
      echo "$tool causal $c rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool-c$c.log" | tr '\n' ' ')"
    done
  done
  save
  echo "== A/B $(el)"
  for r in 1 2; do
    for cfg in old new hb8 desc ushift; do
      case $cfg in
        old) e="DASH_BWD_ATOMIC_TAKE_LATE=0" sch=atomic ;;
        new) e="" sch=atomic ;;
        hb8) e="DASH_HEAD_BLOCK=8" sch=atomic ;;
        desc) e="" sch=descending ;;
        ushift) e="DASH_DEBUG_UNORDERED=1" sch=shift ;;
      esac
      for d in 128 64; do
        env $e timeout -k 5 90 bins/new/dash-attn bench --hdim $d --causal 1,0 --seqlen 2048,4096,8192,16384 \
          --schedules $sch --json "$O/ab-$cfg-d$d-r$r.json" > "$O/ab-$cfg-d$d-r$r.log" 2>&1 || echo "bench $cfg d$d r$r rc $?"
      done
    done
    echo "round $r $(el)"; save
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t = {}
for cfg in ("old", "new", "hb8", "desc", "ushift"):
    for d in (128, 64):
        for r in (1, 2):
            try:
                rows = json.load(open(f"{O}/ab-{cfg}-d{d}-r{r}.json"))
            except Exception as e:
                print("missing", cfg, d, r, e); continue
            for row in rows:
                k = (cfg, d, "causal" if row["causal"] else "full", row["seqlen"])
                t[k] = min(t.get(k, 1e9), row["bwd_ms"])
                t[("tf",) + k] = max(t.get(("tf",) + k, 0), row.get("bwd_tflops", 0))
print("speed ratios, min time of 2 rounds; TFLOP/s of new atomic / descending")
print("hdim mask   seqlen  new/old  hb8/new  new/desc  ushift/new  atomic-new TF  desc TF")
for d in (128, 64):
    for m in ("causal", "full"):
        for s in (2048, 4096, 8192, 16384):
            g = lambda c: t.get((c, d, m, s))
            if None in (g("old"), g("new"), g("hb8"), g("desc"), g("ushift")): print(d, m, s, "missing"); continue
            print(f"{d:4d} {m:6s} {s:6d}  {g('old')/g('new'):7.3f}  {g('new')/g('hb8'):7.3f}  {g('desc')/g('new'):8.3f}  {g('new')/g('ushift'):10.3f}"
                  f"  {t[('tf','new',d,m,s)]:13.1f}  {t[('tf','desc',d,m,s)]:7.1f}")
PY
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
save
