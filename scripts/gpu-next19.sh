#!/usr/bin/env bash
# GPU machine (written in the seventeenth session for the next one), two calls of about 5 minutes.
# Prebuilt binaries (bins.tgz: bins/new/{dash-attn,dash_gpu_tests}; build here, then
# `mkdir -p .snap/bins/new && cp build/dash-attn build/tests/dash_gpu_tests .snap/bins/new/ &&
# tar czf .snap/bins.tgz -C .snap bins`; carry [".snap"]). Everything goes into $OUT/all.tgz.
#   PART=1: the whole GPU suite in 4 shards (nothing building alongside: at ff7314a a pip build
#           starved shard 2) with the sanitizers, incl. BwdSm90SplitRank's first run of the opt-in
#           kWRankSym variants; then 2 interleaved rounds of `dash-attn bench`, causal masks,
#           symmetric shift / shift / descending / atomic, with and without
#           DASH_BWD_WRITER_RANK_CAUSAL=1 (docs/perf.md v18 item 11);
#   PART=2: pip install + pytest, then the peers benchmark (PEERS_BUDGET_S) for the README table.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next19
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  TEST_FILTER='*' LIMIT_S=${LIMIT_S:-300} bash scripts/gpu-bwd-tests.sh "$O"
  for r in 1 2; do
    for v in off on; do
      for d in 128 64; do
        e=0; [ $v = on ] && e=1
        DASH_BWD_WRITER_RANK_CAUSAL=$e timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal 1 \
          --seqlen 1024,2048,4096,8192,16384 --schedules symmetric_shift,shift,descending,atomic \
          --json "$O/sym-$v-r$r-hdim$d.json" > "$O/sym-$v-r$r-hdim$d.log" 2>&1 || echo "sym $v r$r $d rc $?"
      done
    done
  done
  python3 scripts/bench_rows.py "$O"/sym-*-r1-hdim*.json | grep -E " symmetric_shift "
else
  PIP_INSTALL=1 bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
