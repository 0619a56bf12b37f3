#!/usr/bin/env bash
# GPU machine (thirty-first session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests); head.tgz = `git archive HEAD`.
#   PART=1: the head_dim 64 full-mask shift rule from 2048 keys (CostParams::shift_full_tiles_hd64 = 16): the
#           auto tests; `dash-attn bench` of ascending / descending / shift / auto at hdim 64 full 1k-8k, 3 rounds
#           (auto's pick and its time).
#   PART=2: peers at hdim 64 full (3 rounds) with the package of HEAD.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next86
{
if [ "${PART:-1}" = 1 ]; then
  timeout -k 5 120 bins/new/dash_gpu_tests --gtest_filter='BwdSm90Auto.*:EnvSwitches.*' > "$O/tests.log" 2>&1; echo "tests rc $? $(el)"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$O/tests.log" | head
  echo "== bench $(el)"
  for r in 1 2 3; do
    timeout -k 5 90 bins/new/dash-attn bench --hdim 64 --causal 0 --seqlen 1024,2048,4096,8192 \
      --schedules ascending,descending,shift,auto --json "$O/auto64-r$r.json" > "$O/auto64-r$r.log" 2>&1 || echo "bench r$r rc $?"
  done
  python3 scripts/bench_rows.py "$O"/auto64-r*.json | grep -E " auto " | head -12
fi
if [ "${PART:-1}" = 2 ]; then
  install_head || exit 1
  echo "== peers $(el)"
  (cd /tmp && timeout -k 5 200 python "$R/bench/peers.py" --hdims 64 --masks full --rounds 3 --warmup 2 --reps 4 --budget-s 180 \
    --json "$O/peers.json" --png "$O/peers.png" > "$O/peers.log" 2>&1); echo "peers rc $? $(el)"
  python3 "$R/scripts/peers_table.py" "$O/peers.json" --points 64:full:1024,64:full:2048,64:full:4096,64:full:8192 > "$O/table.md" 2>&1; tail -12 "$O/table.md"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
