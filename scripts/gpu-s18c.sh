#!/usr/bin/env bash
# GPU machine, one call (seventeenth session): the writer-rank variants (kWRank: full-mask shift's
# closed-form rank computed by the dQ writer, the MMA warps compute none; bwd_sm90_writer_rank).
# Prebuilt binaries (bins.tgz); carry [".snap"]; `cd .snap && bash scripts/gpu-s18c.sh`.
# 1. the backward GPU tests (incl. BwdSm90SplitRank: one-warp, split and writer rank bitwise equal)
#    in 4 shards, memcheck / racecheck / synccheck alongside;
# 2. bench, 2 interleaved rounds, full masks 1k-16k, hdim 128 and 64:
#    wr    : defaults (writer rank for shift);
#    nowr  : DASH_BWD_WRITER_RANK=0 (the split / one-warp rank as before);
#    uwr   : shift with DASH_DEBUG_UNORDERED=1 (writer rank, no chain): what the visit order still costs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-s18c-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SPLIT_RANK DASH_HEAD_BLOCK DASH_DEBUG_UNORDERED DASH_BWD_WRITER_RANK
[ -d bins ] || tar xzf bins.tgz
b() {  # b TAG ROUND SCHEDULES [ENV...]
  local tag=$1 r=$2 s=$3; shift 3
  for d in 128 64; do
    env "$@" timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal 0 --seqlen 1024,2048,4096,8192,16384 --schedules "$s" \
      --json "$O/$tag-r$r-hdim$d.json" > "$O/$tag-r$r-hdim$d.log" 2>&1 || echo "bench $tag r$r hdim $d rc $?"
  done
}
{
echo "== tests $(el)"
LIMIT_S=${LIMIT_S:-240} bash scripts/gpu-bwd-tests.sh "$O"
for r in 1 2; do
  echo "== round $r $(el)"
  b wr $r shift,descending,atomic
  b nowr $r shift DASH_BWD_WRITER_RANK=0
  b uwr $r shift DASH_DEBUG_UNORDERED=1
done
python3 scripts/bench_rows.py "$O"/wr-r1-hdim*.json | grep -E " shift "
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
