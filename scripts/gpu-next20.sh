#!/usr/bin/env bash
# GPU machine (written in the eighteenth session for the next one), two calls of about 5 minutes.
# Prebuilt binaries (bins.tgz: bins/new/{dash-attn,dash_gpu_tests}; build here, then
# `mkdir -p .snap/bins/new && cp build/dash-attn build/tests/dash_gpu_tests .snap/bins/new/ &&
# tar czf .snap/bins.tgz -C .snap bins`; carry [".snap"]). Everything goes into $OUT/all.tgz.
#   PART=1: the whole GPU suite in 4 shards with the sanitizers, with the head_dim 128 causal 80-row
#           draft on (DASH_BWD_SM90_D128_CAUSAL_BM80=1: BwdSm90D128CausalBm80 and every causal
#           hdim 128 accuracy test run it; nothing building alongside); then 2 interleaved rounds
#           of `dash-attn bench` at hdim 128 causal: 64 rows (the default) against the draft with
#           80 rows forced (DASH_BWD_SM90_BLOCK_M=80) for atomic / spt / descending / ascending;
#           then `auto` against spt / descending at hdim 64 and 128 causal 512-2048 (the
#           short-causal planner rule's first timing, docs/schedules.md "Short causal masks");
#   PART=2: pip install + pytest, then the peers benchmark (PEERS_BUDGET_S) for the README table;
#   PART=3 (optional, ~3 min): ncu (full set, source counters) of shift at hdim 128 full 8k on its
#           80-row tiles, ordered and unordered (DASH_DEBUG_UNORDERED=1), with scripts/ncu_stalls.py
#           --phases: how much of the ordered run's extra time is the MMA warps' dq_empty wait on the
#           single staging buffer (docs/perf.md v18's last paragraph, v19 "What limits").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next20
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests, hdim 128 causal 80-row draft on $(el)"
  DASH_BWD_SM90_D128_CAUSAL_BM80=1 TEST_FILTER='*' LIMIT_S=${LIMIT_S:-240} bash scripts/gpu-bwd-tests.sh "$O"
  for r in 1 2; do
    for v in b64 b80; do
      if [ $v = b80 ]; then e=1 bm=80; else e=0 bm=64; fi
      DASH_BWD_SM90_D128_CAUSAL_BM80=$e DASH_BWD_SM90_BLOCK_M=$bm timeout -k 5 60 bins/new/dash-attn bench --hdim 128 \
        --causal 1 --seqlen 1024,2048,4096,8192,16384 --schedules atomic,spt,descending,ascending \
        --json "$O/c128-$v-r$r.json" > "$O/c128-$v-r$r.log" 2>&1 || echo "c128 $v r$r rc $?"
    done
  done
  python3 scripts/bench_rows.py "$O"/c128-*-r1.json | grep -E " (atomic|descending|spt) "
  for d in 64 128; do
    timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal 1 --seqlen 512,1024,2048 --schedules spt,descending,auto \
      --json "$O/short-hdim$d.json" > "$O/short-hdim$d.log" 2>&1 || echo "short $d rc $?"
  done
  python3 scripts/bench_rows.py "$O"/short-hdim*.json
elif [ "${PART:-1}" = 2 ]; then
  PIP_INSTALL=1 bash scripts/gpu-pytest-peers.sh "$O"
else
  ncu_shift_ordered_unordered 128 8192
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
