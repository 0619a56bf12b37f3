#!/usr/bin/env bash
# GPU machine (thirty-third session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests); head.tgz = `git archive HEAD`.
#   PART=1: the new defaults against DASH_BWD_POST_QUEUE=0 (auto, shift, descending; 2 rounds), then the whole GPU
#           suite (6 shards, sanitizers) with the defaults.
#   PART=2: the package, `pytest tests/python`, peers (3 rounds; PEERS_ARGS to narrow it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next93
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  # The default (queue by schedule, post SMs with it) against DASH_BWD_POST_QUEUE=0 (the thirty-second
  # session's defaults), `auto` and the schedules it picks, 2 interleaved rounds.
  echo "== A/B $(el)"
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for cfg in old new; do
      for d in 128 64; do
        for c in 0 1; do
          if [ $cfg = old ]; then export DASH_BWD_POST_QUEUE=0; else unset DASH_BWD_POST_QUEUE; fi
          timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal $c --seqlen 1024,2048,4096,8192,16384 \
            --schedules auto,shift,descending --json "$O/ab-$cfg-d$d-c$c-r$r.json" > /dev/null 2>&1 || echo "bench $cfg $d $c r$r rc $?"
        done
      done
    done
  done
  unset DASH_BWD_POST_QUEUE
  python3 scripts/env_ab_table.py "$O" old new
  echo "== tests $(el)"
  SHARDS=${SHARDS:-6} TEST_FILTER='*' LIMIT_S=${LIMIT_S:-320} bash scripts/gpu-bwd-tests.sh "$O"
  grep -h -E "BwdSm90PostQueue|BwdSm90Pdl|BwdSm90PostSms|BwdSm90Auto" "$O"/gpu-shard*.log | grep -E "OK|FAILED" | head -12
fi
if [ "${PART:-1}" = 2 ]; then
  head_pip_bg || exit 1
  pip_wait; echo "pip done $(el)"
  PEERS_TIMEOUT=${PEERS_TIMEOUT:-330} PEERS_BUDGET=${PEERS_BUDGET:-300} pytest_and_peers
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
