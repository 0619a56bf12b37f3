#!/usr/bin/env bash
# GPU machine (written in the sixteenth session for the next one): the defaults that have not run
# on a GPU yet (2e98720: 80-row tiles interleave heads for ascending / descending; hdim 64
# descending on 80-row tiles from 1k; docs/perf.md v17 item 10), in two calls of about 5 minutes.
# From prebuilt binaries (bins.tgz: bins/new/{dash-attn,dash_gpu_tests}; build here, then
# `mkdir -p .snap/bins/new && cp build/dash-attn build/tests/dash_gpu_tests .snap/bins/new/ &&
# tar czf .snap/bins.tgz -C .snap bins`; carry [".snap"]). Everything goes into $OUT/all.tgz.
#   PART=1: the whole GPU suite in 4 shards with the sanitizers alongside, then `dash-attn bench`
#           at hdim 128 and 64 (every schedule; block_m, head_block, split_rank in the JSON);
#   PART=2: pip install + pytest, then the peers benchmark (PEERS_BUDGET_S) for the README table.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-next18-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SM90_PRODUCER24 DASH_BWD_SM90_FP16_BM80 DASH_BWD_SM90_D64_BM80 \
  DASH_BWD_SPLIT_RANK DASH_HEAD_BLOCK
[ -d bins ] || tar xzf bins.tgz
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  TEST_FILTER='*' LIMIT_S=${LIMIT_S:-330} bash scripts/gpu-bwd-tests.sh "$O"
  echo "== bench $(el)"
  for d in 128 64; do
    timeout -k 5 120 bins/new/dash-attn bench --hdim $d --schedules ascending,spt,descending,shift,symmetric_shift,atomic,auto \
      --json "$O/bench-hdim$d.json" > "$O/bench-hdim$d.log" 2>&1 || echo "bench hdim $d rc $?"
  done
  python3 scripts/bench_rows.py --min-seqlen 1024 "$O"/bench-hdim*.json | grep -E " (descending|atomic|auto) "
else
  echo "== pip $(el)"
  python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $?" | tee -a "$O/pip.log"
  bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
