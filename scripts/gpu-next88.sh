#!/usr/bin/env bash
# GPU machine (thirty-second session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests); head.tgz = `git archive HEAD`.
#   PART=1: the head_dim 64 shift rule at 5% (fd38eba): the auto tests (BwdSm90Auto.HeadDim64FullSweepResolvesToShift
#           among them); 3 rounds of `dash-attn bench` ascending / descending / shift / auto at hdim 64 full
#           1k-16k; peers at hdim 64 full (3 rounds) with the package of HEAD.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next88
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  head_pip_bg || exit 1
  timeout -k 5 150 bins/new/dash_gpu_tests --gtest_filter='BwdSm90Auto.*:EnvSwitches.*' > "$O/tests.log" 2>&1
  echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|^\[  SKIPPED" "$O/tests.log" | head
  pip_wait; echo "pip done $(el)"
  for r in 1 2 3; do
    timeout -k 5 120 bins/new/dash-attn bench --hdim 64 --causal 0 --seqlen 1024,2048,4096,8192,16384 \
      --schedules ascending,descending,shift,auto --json "$O/auto64-r$r.json" > "$O/auto64-r$r.log" 2>&1 || echo "bench r$r rc $?"
  done
  python3 scripts/bench_rows.py "$O"/auto64-r*.json | awk '{print $4, $5, $7, $8}' | paste - - - -
  echo "bench done $(el)"
  (cd /tmp && timeout -k 5 200 python "$R/bench/peers.py" --hdims 64 --masks full --rounds 3 --warmup 2 --reps 4 --budget-s 180 \
    --json "$O/peers.json" --png "$O/peers.png" > "$O/peers.log" 2>&1); echo "peers rc $? $(el)"
  python3 "$R/scripts/peers_table.py" "$O/peers.json" --points 64:full:512,64:full:1024,64:full:2048,64:full:4096,64:full:8192,64:full:16384 > "$O/table.md" 2>&1; tail -14 "$O/table.md"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
