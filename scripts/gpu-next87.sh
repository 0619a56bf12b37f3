#!/usr/bin/env bash
# GPU machine (thirty-second session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests); head.tgz = `git archive HEAD`.
#   PART=1: the auto / env tests while the package builds; `dash-attn bench` of every schedule + auto at both
#           head dims (the planner's refit data for this GPU); 2 more rounds of ascending / descending / shift /
#           auto at hdim 64 full 1k-8k (auto's pick with the 2048-key shift rule); the Python suite; peers
#           (3 rounds, the standard sweep).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next87
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  head_pip_bg || exit 1
  echo "== pip (background) + tests $(el)"
  timeout -k 5 150 bins/new/dash_gpu_tests --gtest_filter='BwdSm90Auto.*:EnvSwitches.*:BwdSm90PostSms.*' > "$O/tests.log" 2>&1
  echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$O/tests.log" | head
  pip_wait; echo "pip done $(el)"
  echo "== bench every schedule $(el)"
  bench_every_schedule
  for r in 2 3; do
    timeout -k 5 90 bins/new/dash-attn bench --hdim 64 --causal 0 --seqlen 1024,2048,4096,8192 \
      --schedules ascending,descending,shift,auto --json "$O/auto64-r$r.json" > "$O/auto64-r$r.log" 2>&1 || echo "bench r$r rc $?"
  done
  python3 scripts/bench_rows.py "$O/bench-hdim64.json" "$O"/auto64-r*.json 2>&1 | grep -E " (auto|shift|descending) " | head -30
  echo "bench done $(el)"
  PEERS_TIMEOUT=260 PEERS_BUDGET=230 pytest_and_peers
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
