#!/usr/bin/env bash
# GPU machine (forty-fourth session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests); head.tgz (the package's
# sources) is made here from the working tree. Atomic with late taking and, on causal masks from 2048 keys, head blocks of 8
# (docs/perf.md v45): (1) the package's pip install in the background while the atomic / take-late / head-block GPU tests
# run; (2) `dash-attn bench` of atomic at causal 2k-16k, both head dims (the head block that ran); (3) the peers sweep at
# head_dim 128 and 64, 2k-16k (PEERS_EXTRA / PEERS_TIMEOUT / PEERS_BUDGET override), 3 rounds: the det / atomic ratios
# against the new atomic, and the targets' table.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next118
main() {
  cat "$O/machine.txt"
  [ -f head.tgz ] || { tar czf /tmp/head.tgz --exclude=./docs/data --exclude=./bins --exclude=./.snap --exclude='./*.txz' . && mv /tmp/head.tgz head.tgz; }
  head_pip_bg || return 1
  timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='*atomic*:*Atomic*:BwdSm90TakeLate.*:BwdSm90TakeAhead.*:BwdSm90HeadBlock.*' \
    > "$O/tests.log" 2>&1; echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|SKIPPED \]" "$O/tests.log" | head -20
  for d in 128 64; do
    timeout -k 5 90 bins/new/dash-attn bench --hdim $d --causal 1 --seqlen 2048,4096,8192,16384 --schedules atomic,descending \
      --json "$O/bench-atomic-d$d.json" > "$O/bench-atomic-d$d.log" 2>&1 || echo "bench d$d rc $?"
    python3 -c "
import json,sys
for r in json.load(open('$O/bench-atomic-d$d.json')): print(r['hdim'], r['seqlen'], r['schedule'], 'head_block', r['head_block'], 'block_m', r['block_m'], r['bwd_tflops'])"
  done
  save
  pip_wait; echo "pip done $(el)"
  run_pytest() { echo "pytest not run in this call"; }
  PEERS_EXTRA=${PEERS_EXTRA:-"--hdims 128,64 --seqlens 2048,4096,8192,16384"} PEERS_TIMEOUT=${PEERS_TIMEOUT:-400} \
    PEERS_BUDGET=${PEERS_BUDGET:-340} PYTEST_LAST=1 pytest_and_peers
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
save; [ -f "$O/peers.json" ] && cp "$O/peers.json" "$O/table.md" "$DEST/"; true
