#!/usr/bin/env bash
# GPU machine (written in the twenty-fifth session for the next one; not run yet). Everything goes
# into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = the default build): where the forward's tensor pipe idles (22% of the
#          cycles at hdim 128 full 8k, ncu, docs/perf.md v26): ncu --set full with the source page on
#          the forward at hdim 128 full 8k (wgmma SS), hdim 128 causal 8k (Q in registers, RS) and
#          hdim 64 full 8k, then scripts/ncu_stalls.py (stall reasons, hottest instructions) and
#          --phases (the ping-pong step cut at its waits and barriers).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next54
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/ncu"
  for shape in "128 0" "128 1" "64 0"; do
    set -- $shape
    echo "== forward hdim $1 causal $2 8k $(el)"
    OUT="$O/ncu/d$1c$2" BUILD_DIR=bins/new WHAT=fwd HDIM=$1 CAUSAL=$2 SEQLEN=8192 timeout -k 5 150 bash scripts/profile-bwd.sh
    f="$O/ncu/d$1c$2/fwd-descending-sass.csv"
    python3 scripts/ncu_stalls.py "$f" --top 20 > "$O/ncu/stalls-d$1c$2.txt" 2>&1; head -30 "$O/ncu/stalls-d$1c$2.txt"
    python3 scripts/ncu_stalls.py "$f" --phases > "$O/ncu/phases-d$1c$2.txt" 2>&1; head -40 "$O/ncu/phases-d$1c$2.txt"
    rm -f "$O"/ncu/d$1c$2/*.ncu-rep
  done
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
