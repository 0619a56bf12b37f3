#!/usr/bin/env bash
# GPU machine (written in the twentieth session for the next one), two calls of about 5-7 minutes,
# from the repository root with bins/ unpacked (`tar xzf .snap/bins.tgz`; .snap with bins.tgz as in
# gpu-next28.sh). Everything goes into $OUT/all.tgz.
#   PART=1: the whole GPU suite at HEAD in 6 shards (SHARDS; the 4 x 240 s of gpu-next27.sh were not
#           enough) with the sanitizers: the dQ first store (3c5c9de) has run only in its own test and
#           the determinism / accuracy tests so far; then `dash-attn bench` of every schedule;
#   PART=2: pip install + pytest, then the peers benchmark (all 24 points) for the README table with
#           the first store (the 8d47f07 table predates it).
#   PART=3 (run once at ef0214e; the draft was removed after it, docs/perf.md v22 item 2): the fused-postprocess draft (DASH_BWD_FUSED_POST=1): its test
#           BwdSm90FusedPost (DASH_TEST_SM90_DRAFT=1; the watchdog catches a hang), memcheck /
#           racecheck of a small fused launch, then 2 interleaved rounds of `dash-attn bench` with and
#           without it at hdim 128 / 64 full and causal 512-4k (descending, spt).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next32
unset DASH_BWD_DQ_FIRST_STORE DASH_BWD_FUSED_POST
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  SHARDS=${SHARDS:-6} TEST_FILTER='*' LIMIT_S=${LIMIT_S:-300} bash scripts/gpu-bwd-tests.sh "$O"
  echo "== bench $(el)"
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json | grep -E " auto "
elif [ "${PART:-1}" = 3 ]; then
  echo "== fused postprocess draft $(el)"
  DASH_TEST_SM90_DRAFT=1 DASH_TEST_WATCHDOG_S=60 timeout -k 5 240 bins/new/dash_gpu_tests \
    --gtest_filter='BwdSm90FusedPost.*' > "$O/fused-tests.log" 2>&1
  echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/fused-tests.log" | tr '\n' ' ')"
  grep -E "Failure|FAILED|hang|watchdog" "$O/fused-tests.log" | head -5
  for tool in memcheck racecheck; do
    DASH_BWD_FUSED_POST=1 timeout -k 5 60 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 128 --causal 1 \
      --seqlen 1000 --batch 1 --heads 4 --kv-heads 2 --schedules descending,shift --reps 1 > "$O/san-$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
  done
  switch_ab DASH_BWD_FUSED_POST "128 64" "0 1" descending,spt 512,1024,2048,4096
else
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
