#!/usr/bin/env bash
# GPU machine, one call (seventeenth session): where shift's remaining per-step cost sits.
# gpu-s18a.sh found unordered shift (DASH_DEBUG_UNORDERED=1: no semaphore waits, split rank still
# computed) as slow as ordered shift: 0.75-0.79 of atomic at hdim 64 full at every length. Shift
# also runs head-major (grouped schedules), with the drain rule and without take-ahead.
# 1. bench, 2 interleaved rounds, full masks: descending unordered, interleaved (default) and
#    head-major (DASH_HEAD_BLOCK=1); shift unordered; atomic.
# 2. ncu (full set, source counters) at hdim 64 full 2k, both unordered: shift and head-major descending.
# Prebuilt binaries (bins.tgz); carry [".snap"]; `cd .snap && bash scripts/gpu-s18b.sh`.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-s18b-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SPLIT_RANK DASH_HEAD_BLOCK DASH_DEBUG_UNORDERED
[ -d bins ] || tar xzf bins.tgz
b() {  # b TAG ROUND SCHEDULES [ENV...]
  local tag=$1 r=$2 s=$3; shift 3
  for d in 64 128; do
    env "$@" timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal 0 --seqlen 1024,2048,4096,16384 --schedules "$s" \
      --json "$O/$tag-r$r-hdim$d.json" > "$O/$tag-r$r-hdim$d.log" 2>&1 || echo "bench $tag r$r hdim $d rc $?"
  done
}
{
for r in 1 2; do
  echo "== round $r $(el)"
  b u $r descending,shift,atomic DASH_DEBUG_UNORDERED=1
  b uhm $r descending DASH_DEBUG_UNORDERED=1 DASH_HEAD_BLOCK=1
done
echo "== ncu $(el)"
mkdir -p "$O/ncu"
OUT="$O/ncu" BUILD_DIR=bins/new HDIM=64 SEQLEN=2048 SCHEDULES=shift DASH_DEBUG_UNORDERED=1 bash scripts/profile-bwd.sh
OUT="$O/ncu" BUILD_DIR=bins/new HDIM=64 SEQLEN=2048 SCHEDULES=descending DASH_DEBUG_UNORDERED=1 DASH_HEAD_BLOCK=1 bash scripts/profile-bwd.sh
rm -f "$O"/ncu/*.ncu-rep
for s in shift descending; do
  echo "== phases $s"; python3 scripts/ncu_stalls.py "$O/ncu/bwd-$s-sass.csv" --phases --top 12 > "$O/ncu/phases-$s.txt" 2>&1; head -70 "$O/ncu/phases-$s.txt"
done
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
