#!/usr/bin/env bash
# GPU machine (written in the twenty-first session for the next one), two calls of about 5-7
# minutes. Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked as in gpu-next28.sh): the whole GPU suite at HEAD in 6 shards
#          with the sanitizers, now with PDL and the polling postprocess on by default (df48563;
#          the suite has run with PDL on, the polling postprocess only in BwdSm90Pdl and the
#          determinism / first-store tests), including BwdSm90Graph (a captured backward replayed:
#          written, never run); then `dash-attn bench` of every schedule;
#   PART=2 (from the repository root: `tar xzf .snap/bins.tgz && PART=2 bash scripts/gpu-next35.sh`):
#          pip install + pytest, then the peers benchmark (all 24 points) for the README table
#          (the ef0214e table predates PDL and the polling postprocess).
#   PART=3 (from .snap): where a short backward's time goes now (ncu: each kernel's duration at
#          hdim 128 full 1k and 4k, descending), then the 16-byte-load preprocess draft
#          (DASH_BWD_PRE_VEC=1, compile-checked only): its test BwdSm90PreVec and an A/B at hdim 128 /
#          64, full and causal, 512-4k (descending, atomic).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next35
unset DASH_BWD_DQ_FIRST_STORE DASH_BWD_PDL DASH_BWD_POST_POLL
{
if [ "${PART:-1}" = 1 ]; then
  suite_and_bench "BwdSm90Graph|BwdSm90Pdl"
elif [ "${PART:-1}" = 3 ]; then
  echo "== kernel durations (ncu) $(el)"
  for sl in 1024 4096; do
    timeout -k 5 150 ncu --clock-control none --metrics gpu__time_duration.sum --csv -c 40 \
      bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen $sl --schedules descending --reps 2 \
      > "$O/ncu-durations-$sl.csv" 2> "$O/ncu-durations-$sl.err"
    python3 scripts/ncu_durations.py "$O/ncu-durations-$sl.csv" "$sl"
  done
  echo "== 16-byte preprocess draft $(el)"
  DASH_TEST_WATCHDOG_S=60 timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='BwdSm90PreVec.*' > "$O/prevec-tests.log" 2>&1
  echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/prevec-tests.log" | tr '\n' ' ')"
  grep -E "Failure" -A6 "$O/prevec-tests.log" | head -20
  switch_ab DASH_BWD_PRE_VEC "128 64" "0 1" descending,atomic 512,1024,2048,4096
else
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
