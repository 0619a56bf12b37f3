#!/usr/bin/env bash
# GPU machine: a hang hunt. N_REL release + N_DBG DASH_DEBUG_WAITS processes of one gtest filter
# at once (FILTER, REPEAT, BUDGET_S), with DASH_TEST_VERBOSE=1 (tests that support it name each
# launch) and DASH_TEST_WATCHDOG_S=${WATCHDOG_S:-20} (a backward running that long is taken as hung:
# the test dumps every CTA's dQ mailbox slots next to their semaphores and aborts, rc 134).
# Prints per process: rc (124 = killed by the timeout, 134 = the watchdog), tests passed, the
# last lines; then the debug builds' "dash-attn" reports, counted, and the first watchdog dump.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/hang-logs}; mkdir -p "$OUT"
REL=${REL_TESTS:-build/tests/dash_gpu_tests}; DBG=${DBG_TESTS:-dbg/dash_gpu_tests}
run_one() {  # name binary
  DASH_TEST_VERBOSE=1 DASH_TEST_SM90_DRAFT=1 DASH_TEST_WATCHDOG_S=${WATCHDOG_S:-20} timeout -k 5 ${BUDGET_S:-200} "$2" --gtest_filter="$FILTER" \
    --gtest_repeat=${REPEAT:-30} > "$OUT/$1.log" 2>&1
  echo "$1 rc $? passed $(grep -c 'OK \]' "$OUT/$1.log") last: $(grep -v '^$' "$OUT/$1.log" | grep -v dash-attn | tail -2 | tr '\n' '|')"
}
for k in $(seq 1 ${N_REL:-2}); do run_one rel$k "$REL" & done
for k in $(seq 1 ${N_DBG:-2}); do run_one dbg$k "$DBG" & done
wait
grep -h "dash-attn" "$OUT"/*.log | sed 's/block [0-9]*/block N/; s/thread [0-9]*/thread N/' | sort | uniq -c | sort -rn | head -40
f=$(grep -l "WATCHDOG:" "$OUT"/*.log 2>/dev/null | head -1)
[ -n "$f" ] && { echo "== watchdog dump of $(basename "$f") (lines that are not 'exit posted'):"; grep "WATCHDOG:" "$f" | grep -v "exit posted" | head -${DUMP_LINES:-150}; }
exit 0
