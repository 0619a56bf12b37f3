#!/usr/bin/env bash
# GPU machine (written in the forty-fifth session, which got no GPU; ran once in the forty-sixth, at 1c5aa37:
# docs/data/s46-h100/next120, docs/perf.md v47. The walk lost and DASH_BWD_ATOMIC_WALK is gone since).
# .snap: bins.txz (bins/new = HEAD's dash-attn,
# dash_gpu_tests); head.tgz (the package's sources) is made here from the working tree. Atomic's walk
# (ScheduleModel::default_atomic_walk, docs/perf.md v46): DASH_BWD_ATOMIC_WALK=1 makes atomic on full masks visit Q tiles
# in full-mask shift's cyclic order (the default: descending's). (1) the package's pip install in the background while
# the atomic / take-late / head-block GPU tests run (the causal atomic head-block-8 default of v45 and the walk);
# (2) 2 interleaved rounds of `dash-attn bench`, hdim 128 and 64, 2k-16k: atomic with the default walk (walk0) and
# walk 1 (both masks: at causal walk 1 is refused, the same model, a noise floor), walk 1 on the two-buffer kernel (dq2:
# DASH_BWD_SM90_DQ2=1, hdim 128 full), shift with DASH_DEBUG_UNORDERED=1 (ushift) and ordered shift at full masks; speed
# over walk0 (min of the rounds); (3) the peers sweep at head_dim 128 and 64, 2k-16k (PEERS_EXTRA / PEERS_TIMEOUT /
# PEERS_BUDGET override; SKIP_PEERS=1 skips it), 3 rounds: the det / atomic ratios against v45's atomic, and the targets' table. On an H200 (the
# card the targets are written for) one A/B round and the sweep from 1024 keys, with a longer budget.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next120
main() {
  cat "$O/machine.txt"
  local rounds="1 2" seqlens=2048,4096,8192,16384 budget=290
  if grep -q H200 "$O/machine.txt"; then rounds=1 seqlens=1024,2048,4096,8192,16384 budget=350; fi
  [ -f head.tgz ] || { tar czf /tmp/head.tgz --exclude=./docs/data --exclude=./bins --exclude=./.snap --exclude='./*.txz' . && mv /tmp/head.tgz head.tgz; }
  head_pip_bg || return 1
  timeout -k 5 150 bins/new/dash_gpu_tests --gtest_filter='*atomic*:*Atomic*:BwdSm90TakeLate.*:BwdSm90HeadBlock.*' \
    > "$O/tests.log" 2>&1; echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|SKIPPED \]" "$O/tests.log" | head -20
  save
  for r in $rounds; do
    for cfg in walk0 walk1 dq2 ushift shift; do
      ds="128 64"
      case $cfg in
        walk0) e="" sch=atomic c=1,0 ;;
        walk1) e="DASH_BWD_ATOMIC_WALK=1" sch=atomic c=1,0 ;;
        dq2) e="DASH_BWD_SM90_DQ2=1 DASH_BWD_ATOMIC_WALK=1" sch=atomic c=0 ds=128 ;;
        ushift) e="DASH_DEBUG_UNORDERED=1" sch=shift c=0 ;;
        shift) e="" sch=shift c=0 ;;
      esac
      for d in $ds; do
        env $e timeout -k 5 90 bins/new/dash-attn bench --hdim $d --causal $c --seqlen 2048,4096,8192,16384 \
          --schedules $sch --json "$O/ab-$cfg-d$d-r$r.json" > "$O/ab-$cfg-d$d-r$r.log" 2>&1 || echo "bench $cfg d$d r$r rc $?"
      done
    done
    echo "round $r $(el)"; save
  done
  # speed over the default atomic (walk0), per hdim / mask / length; what shift ran (block_m is in the JSON)
  python3 scripts/env_ab_table.py "$O" walk0 walk1 dq2 ushift shift --schedule-blind
  save
  [ "${SKIP_PEERS:-0}" = 1 ] && { echo "peers skipped (SKIP_PEERS=1) $(el)"; return 0; }
  pip_wait; echo "pip done $(el)"
  run_pytest() { echo "pytest not run in this call"; }
  PEERS_EXTRA=${PEERS_EXTRA:-"--hdims 128,64 --seqlens $seqlens"} PEERS_TIMEOUT=${PEERS_TIMEOUT:-$((budget + 40))} \
    PEERS_BUDGET=${PEERS_BUDGET:-$budget} PYTEST_LAST=1 pytest_and_peers
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
save; [ -f "$O/peers.json" ] && cp "$O/peers.json" "$O/table.md" "$DEST/"; true
