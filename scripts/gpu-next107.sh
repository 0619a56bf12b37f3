#!/usr/bin/env bash
# GPU machine (fortieth session). .snap as for gpu-next105.sh (bins.txz: bins/new = HEAD's dash-attn,
# dash_gpu_tests, dq_reduce_bw; head.tgz = `git archive HEAD`, copied to the repo root first).
#   bench/probes/dq_reduce_bw.cu with its paced table (every variant at one step per PACE_NS,
#           default 2500, against a paced empty loop: the pair's and solo's own energy per step at the same
#           wall time; docs/perf.md v41 item 1: unpaced, the pair's step was slower, which mixes the active
#           power into its energy), while the package's pip install runs on the CPUs; then the head_dim 128
#           half of the peers sweep (no Python suite: it ran in gpu-next106.sh PART=2 the same day).
#           PROBE=0 skips the probe; PEERS_EXTRA replaces the peers arguments (later ones win, e.g.
#           "--hdims 128 --seqlens 4096,8192,16384 --rounds 5"); DASH_COMMIT names the commit in peers.json.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
# The probe (unless PROBE=0) while pip builds the package, then the peers (no Python suite).
probe_then_peers() {
  cat "$O/machine.txt"
  head_pip_bg || return 1
  if [ "${PROBE:-1}" = 1 ]; then
    timeout -k 5 150 bins/new/dq_reduce_bw 2000 2 "${PACE_NS:-2500}" > "$O/probe.log" 2>&1 || echo "probe rc $?"
    cat "$O/probe.log"; echo "probe $(el)"
  else
    echo "probe not run (PROBE=0)" > "$O/probe.log"
  fi
  pip_wait; echo "pip done $(el)"
  run_pytest() { echo "pytest not run here (it ran in gpu-next106.sh PART=2 the same day)"; }
  PEERS_EXTRA=${PEERS_EXTRA:-"--hdims 128"} PEERS_TIMEOUT=${PEERS_TIMEOUT:-260} PEERS_BUDGET=${PEERS_BUDGET:-220} \
    PYTEST_LAST=1 pytest_and_peers
  echo "total $(el)"
}
gpu_setup gpu-next107
probe_then_peers 2>&1 | tee "$O/run.log"
mkdir -p "$DEST"
tar czf "$DEST/part1.tgz" -C "$O" . && cp "$O/run.log" "$O/probe.log" "$DEST/" && { [ -f "$O/peers.json" ] && cp "$O/peers.json" "$O/table.md" "$DEST/" || true; }
