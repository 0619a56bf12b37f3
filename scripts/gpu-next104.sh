#!/usr/bin/env bash
# GPU machine (thirty-eighth session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests),
# head.tgz = `git archive HEAD` (copy it to the repo root first). Logs straight under $OUT.
#   PART=1: `dash-attn bench` of every schedule while the package builds; then bench/power_probe.py
#           (each backward back to back for 2.5 s, hdim 128 full / causal 8k / 16k: TFLOP/s, SM clock,
#           energy per FLOP, ours against cuDNN at the power cap), then the peers sweep (PEERS_EXTRA,
#           default "--hdims 64": the half next103 did not reach; SKIP_PEERS=1: none, and of the Python suite test_power_probe.py only) and the Python suite; the SM clock and
#           power sampled every 250 ms ($OUT/clocks.csv, phase marks in marks.txt).
#   PART=2: the whole GPU suite (6 shards, sanitizers alongside) on bins/new.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup_flat gpu-next104
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  clocks_start
  head_pip_bg || exit 1
  echo "== pip (background) + bench every schedule $(el)"; mark bench
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json 2>&1 | grep -E " auto " | head -30
  echo "bench done $(el)"; mark pip_wait
  pip_wait; echo "pip done $(el)"; mark probe
  for d in ${PROBE_HDIMS:-128}; do  # (PROBE_SHAPES_64: the shapes at head_dim 64)
    sh=""; [ "$d" = 64 ] && sh="--shapes ${PROBE_SHAPES_64:-full:8192,causal:8192}"
    (cd /tmp && timeout -k 5 ${PROBE_TIMEOUT:-150} python "$R/bench/power_probe.py" --hdim $d $sh ${PROBE_EXTRA:-} \
      --json "$O/probe-d$d.json" > "$O/probe-d$d.log" 2>&1); echo "probe hdim $d rc $? $(el)"
    grep -A40 "^hdim" "$O/probe-d$d.log" | head -30
  done
  mark peers
  if [ "${SKIP_PEERS:-0}" = 1 ]; then  # (a short call: the probe's own Python test only)
    (cd "$R" && timeout -k 5 100 python -m pytest tests/python/test_power_probe.py -q -p no:cacheprovider > "$O/pytest.log" 2>&1)
    echo "pytest (test_power_probe.py) rc $? $(el)"; tail -2 "$O/pytest.log"
  else
    PYTEST_LAST=1 PEERS_EXTRA=${PEERS_EXTRA:-"--hdims 64"} PEERS_TIMEOUT=${PEERS_TIMEOUT:-230} \
      PEERS_BUDGET=${PEERS_BUDGET:-200} pytest_and_peers
  fi
  mark end
  clocks_stop
fi
if [ "${PART:-1}" = 2 ]; then
  SHARDS=6 TEST_FILTER='*' LIMIT_S=300 bash scripts/gpu-bwd-tests.sh "$O"
  echo "suite rc $? $(el)"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
