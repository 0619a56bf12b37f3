#!/usr/bin/env bash
# GPU machine, the eighteenth session: the whole state at this commit (kWRankSym the default).
# Prebuilt binaries (bins.tgz: bins/new = this commit); carry [".snap"]; `cd .snap && bash scripts/gpu-s19.sh`.
# 1. pip install in the background; the whole GPU suite in 4 shards with the sanitizers alongside;
# 2. bench: every schedule, both masks, hdim 128 and 64 (the defaults);
# 3. pytest, then the peers benchmark (scripts/gpu-pytest-peers.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-s19
{
echo "== pip (background) + tests $(el)"
pip_bg
TEST_FILTER='*' LIMIT_S=${LIMIT_S:-240} bash scripts/gpu-bwd-tests.sh "$O"
pip_wait
echo "== bench $(el)"
bench_every_schedule
python3 scripts/bench_rows.py --min-seqlen 1024 "$O"/bench-hdim*.json | grep -E " causal .* (symmetric_shift|descending|atomic|auto) "
bash scripts/gpu-pytest-peers.sh "$O"
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
