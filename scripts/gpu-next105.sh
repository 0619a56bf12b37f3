#!/usr/bin/env bash
# GPU machine (for the thirty-ninth session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests),
# head.tgz = `git archive HEAD` (copy it to the repo root first). $OUT returns only about 8 files, so each
# part packs its logs into one $OUT/PART.tgz and prints its summaries to stdout.
#   PART=1: `dash-attn bench --sustain 2` (docs/perf.md v39 item 5; its first GPU run) at hdim 128 full /
#           causal 8k / 16k for auto and atomic: the defaults, DASH_DEBUG_NO_REDUCE=1 (the dQ bulk reduce
#           skipped: its share of the energy at the power cap; gradients wrong, diagnostic only) and
#           DASH_DEBUG_UNORDERED=1 (no dQ order waits), interleaved twice; scripts/sustain_ab.py tables;
#           then the same at the cap for a build with every backward exp2 on MUFU at head_dim 128 (built
#           here meanwhile) against the default (candidate (c)). CFGS (default "def noreduce unordered") and
#           XROUNDS (the exp2 A/B's rounds, default 2) shorten it.
#   PART=2: the whole GPU suite (6 shards, sanitizers alongside) on bins/new; LIMIT_S per shard (300).
#   PART=3: the hdim 64 half of the peers sweep with the head-block rule, and the Python suite.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next105
{
cat "$O/machine.txt"
case "${PART:-1}" in
1)
  # candidate (c) of docs/perf.md v39 item 4: dash-attn with no exp2 on the FMA pipe at head_dim 128 (MUFU
  # only), built here in the background (about 100 s on 2 cores; the GPU runs below do not wait for it)
  (cmake -S . -B /tmp/b-exp2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_BUILD_TESTS=OFF -DDASH_BWD_EXP2_FMA_EVERY_HD128=0 \
     > "$O/exp2-build.log" 2>&1 && cmake --build /tmp/b-exp2 --target dash-attn -j 4 >> "$O/exp2-build.log" 2>&1
   echo "exp2 build rc $?" >> "$O/exp2-build.log") &
  for r in 1 2; do
    for cfg in ${CFGS:-def noreduce unordered}; do
      case $cfg in def) e="" ;; noreduce) e="DASH_DEBUG_NO_REDUCE=1" ;; unordered) e="DASH_DEBUG_UNORDERED=1" ;; esac
      env $e timeout -k 5 100 bins/new/dash-attn bench --hdim 128 --causal 0,1 --seqlen 8192,16384 \
        --schedules auto,atomic --reps 3 --sustain 2 --json "$O/sus-$cfg-r$r.json" > "$O/sus-$cfg-r$r.log" 2>&1 \
        || echo "bench $cfg r$r rc $?"
    done
  done
  grep -h "sustained\|NVML" "$O/sus-def-r1.log" | head -10
  for r in 1 2; do
    echo "== round $r: noreduce / def, unordered / def"
    python3 scripts/sustain_ab.py $(for c in ${CFGS:-def noreduce unordered}; do echo "$O/sus-$c-r$r.json"; done)
  done
  echo "== both rounds: means of the per-round ratios"
  python3 scripts/sustain_ab.py $(for c in ${CFGS:-def noreduce unordered}; do echo "$O/sus-$c-r1.json,$O/sus-$c-r2.json"; done)
  wait; tail -1 "$O/exp2-build.log"
  if [ -x /tmp/b-exp2/dash-attn ]; then
    for r in $(seq 1 "${XROUNDS:-2}"); do
      for cfg in def exp2; do
        b=bins/new/dash-attn; [ $cfg = exp2 ] && b=/tmp/b-exp2/dash-attn
        timeout -k 5 100 $b bench --hdim 128 --causal 0,1 --seqlen 8192,16384 --schedules auto --reps 3 --sustain 2 \
          --json "$O/x-$cfg-r$r.json" > "$O/x-$cfg-r$r.log" 2>&1 || echo "bench $cfg r$r rc $?"
      done
      echo "== round $r: MUFU-only exp2 / default (every 4th on the FMA pipe); grad_hash differs by design"
      python3 scripts/sustain_ab.py "$O/x-def-r$r.json" "$O/x-exp2-r$r.json"
    done
  fi
  ;;
2)
  SHARDS=6 TEST_FILTER='*' LIMIT_S=${LIMIT_S:-300} bash scripts/gpu-bwd-tests.sh "$O"
  echo "suite rc $? $(el)"
  ;;
3)
  head_pip_bg || exit 1
  pip_wait; echo "pip done $(el)"
  PYTEST_LAST=1 PEERS_EXTRA=${PEERS_EXTRA:-"--hdims 64"} PEERS_TIMEOUT=${PEERS_TIMEOUT:-230} \
    PEERS_BUDGET=${PEERS_BUDGET:-200} pytest_and_peers
  ;;
esac
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
mkdir -p "$DEST"
tar czf "$DEST/part${PART:-1}.tgz" -C "$O" . && cp "$O/run.log" "$DEST/run${PART:-1}.log" && { [ -f "$O/peers.json" ] && cp "$O/peers.json" "$O/table.md" "$DEST/" || true; }
