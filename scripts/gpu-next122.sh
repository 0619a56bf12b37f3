#!/usr/bin/env bash
# GPU machine (forty-seventh session). .snap: bins.txz (bins/new = HEAD's dash-attn and dash_gpu_tests); head.tgz (the
# package's sources) is made here from the working tree. Phases, each switched by the environment:
#   SUITE=1: the whole GPU suite (scripts/gpu-suite-shards.sh, 6 shards, 290 s each) on bins/new, first and alone
#            (the package's pip install starves the shards: it starts after them);
#   BENCH_ROUNDS=N (default 3): N rounds of `dash-attn bench` with every schedule, atomic and auto at hdim 128 and 64,
#            both masks, 2k-16k (auto-std-dD-rR.json; scripts/auto_sweep.py: auto against the best measured row),
#            while the pip install runs in the background (CPU only);
#   PEERS=1 (default): one peers sample, hdim 128 and 64, 2k-16k (bench/peers.py, 3 rounds inside);
#   PYTEST=1 (default): the Python suite after the peers.
# The pip install is skipped when the package of this commit is already installed (a warm machine:
# /tmp/dash-pip-$DASH_COMMIT). Call A: `SUITE=0` (bench + peers + pytest, ~400 s); call B: `SUITE=1 BENCH_ROUNDS=0
# PYTEST=0` (suite + a second peers sample, ~400-480 s).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next122
main() {
  cat "$O/machine.txt"; echo "commit ${DASH_COMMIT:-?}"
  if [ "${SUITE:-0}" = 1 ]; then
    mkdir -p "$O/suite"
    SHARDS=6 bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$O/suite" 290; echo "suite rc $? $(el)"
    save
  fi
  [ -f head.tgz ] || { tar czf /tmp/head.tgz --exclude=./docs/data --exclude=./bins --exclude=./.snap --exclude='./*.txz' . && mv /tmp/head.tgz head.tgz; }
  local mark=/tmp/dash-pip-${DASH_COMMIT:-none}
  if [ -f "$mark" ] && python -c "import dash_attn" 2>/dev/null; then
    mkdir -p /tmp/h && tar xzf head.tgz -C /tmp/h; R=/tmp/h; echo "pip rc 0 (installed by an earlier call)" > "$O/pip.log"
  else
    head_pip_bg || return 1
  fi
  for r in $(seq 1 "${BENCH_ROUNDS:-3}"); do
    for d in 128 64; do
      timeout -k 5 150 bins/new/dash-attn bench --hdim $d --causal 0,1 --seqlen 2048,4096,8192,16384 \
        --schedules ascending,spt,descending,shift,symmetric_shift,atomic,auto \
        --json "$O/auto-std-d$d-r$r.json" > "$O/auto-std-d$d-r$r.log" 2>&1 || echo "bench d$d r$r rc $?"
    done
    echo "bench round $r $(el)"; save
  done
  [ "${BENCH_ROUNDS:-3}" -gt 0 ] && python3 scripts/auto_sweep.py "$O"/auto-std-*.json | tee "$O/auto.txt"
  pip_wait; echo "pip done $(el)"
  grep -q "^pip rc 0" "$O/pip.log" && touch "$mark"
  save
  if [ "${PEERS:-1}" = 1 ]; then
    run_pytest() { echo "pytest not run in this call"; }
    PEERS_EXTRA="--hdims 128,64 --seqlens 2048,4096,8192,16384" PEERS_TIMEOUT=${PEERS_TIMEOUT:-300} \
      PEERS_BUDGET=${PEERS_BUDGET:-270} PYTEST_LAST=1 pytest_and_peers
    unset -f run_pytest; . scripts/gpu-common.sh
  fi
  save
  [ "${PYTEST:-1}" = 1 ] && run_pytest
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
save; [ -f "$O/peers.json" ] && cp "$O/peers.json" "$O/table.md" "$DEST/"; true
