#!/usr/bin/env bash
# GPU machine (forty-seventh session). .snap: bins.txz (bins/new = HEAD's dash-attn and dash_gpu_tests). The two opt-in
# switches for atomic (attention_api.cu; docs/perf.md v48): DASH_BWD_ATOMIC_SHIFT=1 (full masks: shift's task order,
# groups and visits with the unordered writer; unordered shift ran 1.009-1.054x atomic in next120) and
# DASH_BWD_ATOMIC_POLL=1 (the unordered writers count landed adds, so that the polling postprocess, its completion
# queue and its post SMs run for atomic as for the ordered schedules). (1) their GPU tests and the atomic accuracy
# tests (TESTS_S, default 150 s); (2) ROUNDS (default 2) interleaved rounds of `dash-attn bench`, hdim 128 and 64, both
# masks, 2k-16k: atomic with neither (base: also spt, descending, shift), ashift, apoll and both; speed over base
# (min of the rounds); (3) one peers sample, hdim 128 and 64, 2k-16k, with both switches on (PEERS_ENV; SKIP_PEERS=1
# skips it): the deterministic rows against cuDNN / Flex as in next120, det / atomic against the switched atomic. The
# package's pip install (head.tgz, made here) runs in the background from the start.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next123
main() {
  cat "$O/machine.txt"; echo "commit ${DASH_COMMIT:-?}"
  [ -f head.tgz ] || { tar czf /tmp/head.tgz --exclude=./docs/data --exclude=./bins --exclude=./.snap --exclude='./*.txz' . && mv /tmp/head.tgz head.tgz; }
  head_pip_bg || return 1
  timeout -k 5 ${TESTS_S:-150} bins/new/dash_gpu_tests --gtest_filter='BwdSm90AtomicShift.*:BwdSm90AtomicPoll.*' \
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
  save
  [ "${SKIP_PEERS:-0}" = 1 ] && { echo "peers skipped (SKIP_PEERS=1) $(el)"; return 0; }
  pip_wait; echo "pip done $(el)"
  run_pytest() { echo "pytest not run in this call"; }
  export ${PEERS_ENV:-DASH_BWD_ATOMIC_SHIFT=1 DASH_BWD_ATOMIC_POLL=1}
  PEERS_EXTRA="--hdims 128,64 --seqlens 2048,4096,8192,16384" PEERS_TIMEOUT=${PEERS_TIMEOUT:-300} \
    PEERS_BUDGET=${PEERS_BUDGET:-260} PYTEST_LAST=1 pytest_and_peers
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
save; [ -f "$O/peers.json" ] && cp "$O/peers.json" "$O/table.md" "$DEST/"; true
