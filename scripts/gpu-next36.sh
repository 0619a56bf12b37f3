#!/usr/bin/env bash
# GPU machine (twenty-second session), two calls of about 5-6 minutes. Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked as in gpu-next28.sh): the whole GPU suite with the 16-byte
#          preprocess as the default (6bf92f4; before it ran only in BwdSm90PreVec) in 6 shards with
#          the sanitizers; `dash-attn bench` of every schedule; then each kernel's duration under ncu
#          at hdim 128 full 1k / 4k (descending), the preprocess now the 16-byte one.
#   PART=2 (from the repository root: `tar xzf .snap/bins.tgz && PART=2 bash scripts/gpu-next36.sh`):
#          pip install + pytest, then the peers benchmark (all 24 points) for the README table.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next36
unset DASH_BWD_DQ_FIRST_STORE DASH_BWD_PDL DASH_BWD_POST_POLL DASH_BWD_PRE_VEC
{
if [ "${PART:-1}" = 1 ]; then
  suite_and_bench "BwdSm90Graph|BwdSm90Pdl|BwdSm90PreVec"
  echo "== kernel durations (ncu) $(el)"
  for cfg in 1024:1 4096:1 1024:0; do  # seqlen:DASH_BWD_PRE_VEC
    sl=${cfg%:*}
    DASH_BWD_PRE_VEC=${cfg#*:} timeout -k 5 150 ncu --clock-control none --metrics gpu__time_duration.sum --csv -c 40 \
      bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen $sl --schedules descending --reps 2 \
      > "$O/ncu-durations-$cfg.csv" 2> "$O/ncu-durations-$cfg.err"
    python3 scripts/ncu_durations.py "$O/ncu-durations-$cfg.csv" "$cfg"
  done
else
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
