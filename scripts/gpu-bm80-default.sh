#!/usr/bin/env bash
# GPU machine, one call (fifteenth session): the 80-row Q tiles with the 24 / 240-register split as
# the default for atomic, shift and symmetric shift (full masks, hdim 128, bf16, >= 1k), checked
# and benchmarked. From prebuilt binaries (bins.tgz: bins/new/{dash-attn,dash_gpu_tests}; build
# here: cmake --build build && mkdir -p .snap/bins/new && cp build/dash-attn
# build/tests/dash_gpu_tests .snap/bins/new/ && tar czf .snap/bins.tgz -C .snap bins).
# 1. pip install of the package in the background;
# 2. the backward GPU tests (TEST_FILTER) in 4 shards with the switches unset (the defaults), the
#    sanitizers alongside;
# 3. `dash-attn bench` at hdim 128 and 64 (which tiles and split each schedule ran: block_m,
#    producer_regs in the JSON);
# 4. the peers benchmark (PEERS_ARGS, default both head dims, both masks).
# Everything under $OUT goes into $OUT/all.tgz (the device tool returns few files).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-bm80-default-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SM90_PRODUCER24
[ -d bins ] || tar xzf bins.tgz
(python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $?" >> "$O/pip.log") &
{
echo "== tests $(el)"
bash scripts/gpu-bwd-tests.sh "$O"
echo "== bench $(el)"
for d in 128 64; do
  timeout -k 5 120 bins/new/dash-attn bench --hdim $d --schedules descending,shift,atomic,auto \
    --json "$O/bench-hdim$d.json" > "$O/bench-hdim$d.log" 2>&1 || echo "bench hdim $d rc $?"
done
python3 scripts/bench_rows.py "$O"/bench-hdim*.json
# (the block runs in a pipe's subshell: poll the install's last line instead of `wait`)
until grep -q "^pip rc" "$O/pip.log" 2>/dev/null; do sleep 2; done; tail -1 "$O/pip.log"
echo "== peers $(el)"
SKIP_E2E=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-220} PEERS_ARGS=${PEERS_ARGS:-} OUT="$O" bash scripts/bench-python.sh > "$O/peers-run.log" 2>&1
echo "peers rc $? $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
