#!/usr/bin/env bash
# GPU machine (thirty-seventh session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests),
# head.tgz = `git archive HEAD` (copy it to the repo root first). Logs straight under $OUT.
#   PART=1: the peers sweep with the head-block rule (as gpu-next102.sh PART=1: the head-block / auto /
#           PDL tests and `dash-attn bench` of every schedule while the package builds, then peers
#           (3 rounds) and the Python suite), with the GPU's SM clock and power sampled every 250 ms
#           ($OUT/clocks.csv; phase marks in $OUT/marks.txt; PEERS_EXTRA="--hdims 128", PEERS_BUDGET /
#           PEERS_TIMEOUT for a shorter sweep): is the gap between peers' and bench's
#           time of the same kernel (3-7% at 4k, 6-15% at 8-16k in next96) the power cap?
#   PART=2: the whole GPU suite (6 shards, sanitizers alongside) on bins/new.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup_flat gpu-next103
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  clocks_start
  head_pip_bg || exit 1
  echo "== pip (background) + tests $(el)"; mark tests
  if [ "${SKIP_TESTS:-0}" != 1 ]; then  # (SKIP_TESTS=1: they passed on this build in the thirty-sixth session)
    timeout -k 5 100 bins/new/dash_gpu_tests --gtest_filter='BwdSm90HeadBlock.*:BwdSm90Auto.*:BwdSm90Pdl.*' \
      > "$O/tests.log" 2>&1
    echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$O/tests.log" | head
  fi
  echo "== bench every schedule (while pip builds) $(el)"; mark bench
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json 2>&1 | grep -E " auto " | head -30
  echo "bench done $(el)"; mark pip_wait
  pip_wait; echo "pip done $(el)"; mark peers
  PYTEST_LAST=1 PEERS_TIMEOUT=${PEERS_TIMEOUT:-230} PEERS_BUDGET=${PEERS_BUDGET:-200} pytest_and_peers
  mark end
  clocks_stop
fi
if [ "${PART:-1}" = 2 ]; then
  SHARDS=6 TEST_FILTER='*' LIMIT_S=300 bash scripts/gpu-bwd-tests.sh "$O"
  echo "suite rc $? $(el)"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
