#!/usr/bin/env bash
# GPU machine (forty-sixth session). .snap: bins.txz (bins/old = 1c5aa37's dash-attn, with atomic's
# opt-in shift walk; bins/new = HEAD's, the walk removed again after gpu-next120 measured it at 0.965-0.989 of the
# default walk: docs/perf.md v47); head.tgz (the package's sources) is made here from the working tree.
# (1) the package's pip install in the background while the atomic / head-block / take-late GPU tests run;
# (2) 2 interleaved rounds of `dash-attn bench` (atomic, spt, descending, auto; hdim 128 and 64, both masks, 2k-16k)
# of old and new (the walk's switch in `visit`: 8-24 instructions in 71 of the 100 sm90 kernels, v46 item 2) and of
# new with DASH_BWD_SPLIT_LAST=0 (nosplit: atomic at hdim 64 takes the last-wave split, unordered shift does not,
# and ran 2.8-5.4% ahead of it in gpu-next120) and of new with DASH_HEAD_BLOCK=2 / 4 (hb2 / hb4: spt and
# descending at causal masks in small head blocks; spt runs head-major by default, and det / atomic was 0.971 at
# hdim 64 causal 8k in gpu-next120, where causal atomic takes blocks of 8); speed over old; (3) a second peers sample, hdim 128 and 64, 2k-16k
# (SKIP_PEERS=1 skips it). With little device time: ROUNDS=1 TESTS_S=60 SKIP_PEERS=1 (~150 s).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next121
main() {
  cat "$O/machine.txt"
  [ -f head.tgz ] || { tar czf /tmp/head.tgz --exclude=./docs/data --exclude=./bins --exclude=./.snap --exclude='./*.txz' . && mv /tmp/head.tgz head.tgz; }
  head_pip_bg || return 1
  timeout -k 5 ${TESTS_S:-120} bins/new/dash_gpu_tests --gtest_filter='*AtomicModeAccurate*:BwdSm90TakeLate.*:BwdSm90HeadBlock.*' \
    > "$O/tests.log" 2>&1; echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|SKIPPED \]" "$O/tests.log" | head -20
  save
  local cfgs="new nosplit hb2 hb4"
  [ -x bins/old/dash-attn ] && cfgs="old $cfgs"  # (a later session's .snap may lack 1c5aa37's binary: speed over new)
  for r in $(seq 1 ${ROUNDS:-2}); do
    for cfg in $cfgs; do
      for d in 128 64; do
        c=0,1
        case $cfg in
          old) cmd="bins/old/dash-attn" sch=atomic,spt,descending,auto ;;
          new) cmd="bins/new/dash-attn" sch=atomic,spt,descending,auto ;;
          nosplit) cmd="env DASH_BWD_SPLIT_LAST=0 bins/new/dash-attn" sch=atomic ;;
          hb*) cmd="env DASH_HEAD_BLOCK=${cfg#hb} bins/new/dash-attn" sch=spt,descending c=1 ;;
        esac
        timeout -k 5 120 $cmd bench --hdim $d --causal $c --seqlen 2048,4096,8192,16384 \
          --schedules $sch --json "$O/ab-$cfg-d$d-r$r.json" > "$O/ab-$cfg-d$d-r$r.log" 2>&1 || echo "bench $cfg d$d r$r rc $?"
      done
    done
    echo "round $r $(el)"; save
  done
  python3 scripts/env_ab_table.py "$O" $cfgs
  save
  [ "${SKIP_PEERS:-0}" = 1 ] && { echo "peers skipped (SKIP_PEERS=1) $(el)"; return 0; }
  pip_wait; echo "pip done $(el)"
  run_pytest() { echo "pytest not run in this call"; }
  PEERS_EXTRA=${PEERS_EXTRA:-"--hdims 128,64 --seqlens 2048,4096,8192,16384"} PEERS_TIMEOUT=${PEERS_TIMEOUT:-330} \
    PEERS_BUDGET=${PEERS_BUDGET:-290} PYTEST_LAST=1 pytest_and_peers
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
save; [ -f "$O/peers.json" ] && cp "$O/peers.json" "$O/table.md" "$DEST/"; true
