#!/usr/bin/env bash
# GPU machine, one call (sixteenth session, the last of it): the final build's split-rank rule
# (kSplit at every length, from 64 KV tiles with the hdim 128 80-row tiles). From prebuilt binaries
# (bins.tgz: bins/new/{dash-attn,dash_gpu_tests}; carry [".snap"], `cd .snap && bash
# scripts/gpu-final17.sh`). Everything goes into $OUT/all.tgz.
# 1. pip install of the package in the background;
# 2. the split-rank, determinism, auto and tile-rule GPU tests in 4 shards;
# 3. `dash-attn bench` at hdim 128 and 64 (which kernel ran: block_m, producer_regs, split_rank);
# 4. pytest (tests/python), then the peers benchmark (PEERS_BUDGET_S) for the README table.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-final17-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SM90_PRODUCER24 DASH_BWD_SM90_FP16_BM80 DASH_BWD_SM90_D64_BM80 DASH_BWD_SPLIT_RANK
[ -d bins ] || tar xzf bins.tgz
(python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $?" >> "$O/pip.log") &
{
echo "== tests $(el)"
DASH_TEST_WATCHDOG_S=60 GTEST_FILTER='*SplitRank*:*Determinism*:BwdSm90Auto*:*TileRule*' \
  bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$O" 200
echo "== bench $(el)"
for d in 128 64; do
  timeout -k 5 120 bins/new/dash-attn bench --hdim $d --schedules descending,shift,symmetric_shift,atomic,auto \
    --json "$O/bench-hdim$d.json" > "$O/bench-hdim$d.log" 2>&1 || echo "bench hdim $d rc $?"
done
python3 scripts/bench_rows.py --min-seqlen 2048 "$O"/bench-hdim*.json
bash scripts/gpu-pytest-peers.sh "$O"
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
