#!/usr/bin/env bash
# GPU machine (written in the thirty-third session for the next). .snap: bins/new = HEAD; head.tgz = `git archive HEAD`.
#   PART=1: the queue tests (with the late-append draft's), then an A/B with 2 post SMs of: no queue, the queue
#           (append before the staging buffer's release, the default's), the queue with DASH_BWD_QUEUE_LATE_APPEND=1;
#           ROUNDS (2) interleaved rounds at hdim 128 full (ascending, descending, shift) and causal (spt,
#           descending, symmetric shift), 1k-16k: is the append's place what cost full ascending / descending
#           11-20% at 4k-8k (docs/perf.md v34)?
#   PART=2: peers with the defaults (3 rounds): `PART=1 bash scripts/gpu-next87.sh` does bench + pytest + peers.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next94
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter='BwdSm90PostQueue.*' > "$O/tests.log" 2>&1
  echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|compared" "$O/tests.log" | head
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for cfg in off early late; do
      case $cfg in off) q=0 l=0 ;; early) q=1 l=0 ;; late) q=1 l=1 ;; esac
      for spec in "0 ascending,descending,shift" "1 spt,descending,symmetric_shift"; do
        set -- $spec
        DASH_BWD_POST_QUEUE=$q DASH_BWD_QUEUE_LATE_APPEND=$l DASH_BWD_POST_SMS=2 timeout -k 5 90 bins/new/dash-attn bench \
          --hdim 128 --causal $1 --seqlen 1024,2048,4096,8192,16384 --schedules $2 --json "$O/ab-$cfg-c$1-r$r.json" \
          > /dev/null 2>&1 || echo "bench $cfg c$1 r$r rc $?"
      done
    done
    echo "round $r done $(el)"
  done
  echo "hdim 128, 2 post SMs: queue, queue + late append"; python3 scripts/env_ab_table.py "$O" off early late
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
