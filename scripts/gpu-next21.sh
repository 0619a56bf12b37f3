#!/usr/bin/env bash
# GPU machine (nineteenth session), prebuilt binaries as in gpu-next20.sh (bins.tgz; carry [".snap"]).
# Everything goes into $OUT/all.tgz.
#   PART=1: BwdSm90Producer24.EightyRowTilesBitwiseEqualToTheDefaultSplit with the head_dim 128 causal
#           80-row draft on and off (it failed at 2bcdea0 with the draft on: its two sides ran
#           different tile heights; the test now pins the draft off), then pip install + pytest + the
#           peers benchmark (PEERS_BUDGET_S, 300 by default here: every shape of the sweep) with the
#           short-causal planner rule (auto's first peers run with it);
#   PART=2: `auto` with the head_dim 64 long-full-mask rule (shift at full 16384, docs/schedules.md
#           "Long full masks at head_dim 64: shift"): 2 interleaved rounds of `dash-attn bench` at
#           full 8k / 16k of spt / descending / shift / auto, both head dims; the GPU tests whose
#           names say auto; then ncu of the 80-row shift at hdim 128 full 8k, ordered / unordered
#           (gpu-next20.sh PART=3).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next21
{
if [ "${PART:-1}" = 1 ]; then
  for e in 1 0; do
    echo "== Producer24 test, DASH_BWD_SM90_D128_CAUSAL_BM80=$e $(el)"
    DASH_BWD_SM90_D128_CAUSAL_BM80=$e timeout -k 5 120 bins/new/dash_gpu_tests \
      --gtest_filter='BwdSm90Producer24.*:BwdSm90TileRule.*' > "$O/p24-draft$e.log" 2>&1
    echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/p24-draft$e.log" | tr '\n' ' ')"
  done
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
else
  for r in 1 2; do
    for d in 64 128; do
      timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal 0 --seqlen 8192,16384 --schedules spt,descending,shift,auto \
        --json "$O/full-hdim$d-r$r.json" > "$O/full-hdim$d-r$r.log" 2>&1 || echo "full $d r$r rc $?"
    done
  done
  python3 scripts/bench_rows.py "$O"/full-hdim*-r1.json "$O"/full-hdim*-r2.json
  echo "== auto tests $(el)"
  timeout -k 5 120 bins/new/dash_gpu_tests --gtest_filter='*Auto*:*auto*:BwdSm90TileRule.*' > "$O/auto-tests.log" 2>&1
  echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/auto-tests.log" | tr '\n' ' ')"
  ncu_shift_ordered_unordered 128 8192
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
