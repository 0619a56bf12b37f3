#!/usr/bin/env bash
# GPU machine (thirty-sixth session). .snap: bins.txz (bins/new = HEAD: dash-attn, dash_gpu_tests), head.tgz =
# `git archive HEAD` (copy it to the repo root first).
#   PART=1: the first peers sweep with the head-block rule (descending and full-mask ascending in blocks of 8
#           from 2048 keys): while the package builds, the head-block / auto / PDL tests and `dash-attn bench`
#           of every schedule + auto at both head dims; then the Python suite; peers (3 rounds, the standard
#           sweep).
#   PART=2: the tests and the bench only (no package, no peers), then one A/B round of bins/old (the build
#           before the rule) against bins/new at ascending / descending / auto, 2k-16k.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next102
# logs straight under $OUT (what a timeout leaves still comes back)
mv "$O/machine.txt" "$DEST/"; O=$DEST
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  head_pip_bg || exit 1
  echo "== pip (background) + tests $(el)"
fi
if [ "${PART:-1}" = 1 ] || [ "${PART:-1}" = 2 ]; then
  timeout -k 5 100 bins/new/dash_gpu_tests --gtest_filter='BwdSm90HeadBlock.*:BwdSm90Auto.*:BwdSm90Pdl.*' \
    > "$O/tests.log" 2>&1
  echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$O/tests.log" | head
  echo "== bench every schedule (while pip builds) $(el)"
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json 2>&1 | grep -E " auto " | head -30
  echo "bench done $(el)"
fi
if [ "${PART:-1}" = 2 ] && [ -x bins/old/dash-attn ]; then  # A/B: the build before the rule, then HEAD again
  ab_round 1 old new
  python3 scripts/env_ab_table.py "$O" old new; echo "ab done $(el)"
fi
if [ "${PART:-1}" = 1 ]; then
  pip_wait; echo "pip done $(el)"
  PYTEST_LAST=1 PEERS_TIMEOUT=230 PEERS_BUDGET=200 pytest_and_peers
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
