#!/usr/bin/env bash
# GPU machine (forty-seventh session). .snap: bins.txz (bins/new = HEAD's dash-attn and dash_gpu_tests). The two opt-in
# switches for atomic (attention_api.cu; docs/perf.md v48): DASH_BWD_ATOMIC_SHIFT=1 (full masks: shift's task order,
# groups and visits with the unordered writer; unordered shift ran 1.009-1.054x atomic in next120) and
# DASH_BWD_ATOMIC_POLL=1 (the unordered writers count landed adds, so that the polling postprocess, its completion
# queue and its post SMs run for atomic as for the ordered schedules). (1) their GPU tests and the atomic accuracy
# tests (TESTS_S, default 150 s); (2) ROUNDS (default 2) interleaved rounds of `dash-attn bench`, hdim 128 and 64, both
# masks, 2k-16k: atomic with neither (base: also spt, descending, shift), ashift, apoll and both; speed over base
# (min of the rounds).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next123
main() {
  cat "$O/machine.txt"; echo "commit ${DASH_COMMIT:-?}"
  timeout -k 5 ${TESTS_S:-150} bins/new/dash_gpu_tests \
    --gtest_filter='BwdSm90AtomicShift.*:BwdSm90AtomicPoll.*:BwdSm90DualWriter.AtomicModeAccurate:*AtomicModeAccurate*' \
    > "$O/tests.log" 2>&1; echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|^\[       OK" "$O/tests.log" | head -30
  save
  for r in $(seq 1 ${ROUNDS:-2}); do
    for cfg in base ashift apoll both; do
      for d in 128 64; do
        sch=atomic
        case $cfg in
          base) e="" sch=atomic,spt,descending,shift ;;
          ashift) e="DASH_BWD_ATOMIC_SHIFT=1" ;;
          apoll) e="DASH_BWD_ATOMIC_POLL=1" ;;
          both) e="DASH_BWD_ATOMIC_SHIFT=1 DASH_BWD_ATOMIC_POLL=1" ;;
        esac
        env $e timeout -k 5 120 bins/new/dash-attn bench --hdim $d --causal 0,1 --seqlen 2048,4096,8192,16384 \
          --schedules $sch --json "$O/ab-$cfg-d$d-r$r.json" > "$O/ab-$cfg-d$d-r$r.log" 2>&1 || echo "bench $cfg d$d r$r rc $?"
      done
    done
    echo "round $r $(el)"; save
  done
  python3 scripts/env_ab_table.py "$O" base ashift apoll both
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
save; true
