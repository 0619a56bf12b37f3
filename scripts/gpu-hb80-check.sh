#!/usr/bin/env bash
# GPU machine, one call (sixteenth session): the 80-row head-block interleave and hdim 64
# descending on 80-row tiles from 1k, as defaults. Prebuilt binaries (bins.tgz:
# bins/new/{dash-attn,dash_gpu_tests}; carry [".snap"], `cd .snap && bash scripts/gpu-hb80-check.sh`).
# 1. the tests that cover it (80-row hdim 64, determinism, auto, split rank, head blocks, tile rule), 4 shards;
# 2. `dash-attn bench` hdim 64 and 128, full masks, descending / atomic / auto.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-hb80-check-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
unset DASH_BWD_SM90_BLOCK_M DASH_HEAD_BLOCK DASH_BWD_SPLIT_RANK
[ -d bins ] || tar xzf bins.tgz
{
echo "== tests $(el)"
DASH_TEST_WATCHDOG_S=60 GTEST_FILTER='*D64Bm80*:*Determinism*:BwdSm90Auto*:*SplitRank*:*HeadBlock*:*TileRule*' \
  bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$O" 150
echo "== bench $(el)"
for d in 64 128; do
  timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal 0 --seqlen 1024,2048,4096,8192 \
    --schedules descending,atomic,auto --json "$O/bench-hdim$d.json" > "$O/bench-hdim$d.log" 2>&1 || echo "bench $d rc $?"
done
python3 scripts/bench_rows.py "$O"/bench-hdim*.json
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
