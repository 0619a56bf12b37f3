#!/usr/bin/env bash
# GPU machine (written in the nineteenth session for the next one), two calls of about 5 minutes.
# Prebuilt binaries as in gpu-next20.sh (bins.tgz with bins/new/{dash-attn,dash_gpu_tests}; when
# the tree plus .snap passes 64 MiB, carry a .snap with only scripts/ and bins.tgz, as for
# gpu-next25.sh). Everything goes into $OUT/all.tgz.
#   PART=1: the whole GPU suite in 4 shards with the sanitizers at HEAD (the forward's split K/V
#           release at hdim 64 full and the 176-key draft's kernels are new since the last whole-
#           suite run; nothing building alongside), then `dash-attn bench` of every schedule and
#           auto at both head dims (auto's head_dim 64 long-full rule in the standard sweep);
#   PART=2: pip install + pytest, then the peers benchmark (PEERS_BUDGET_S 300: all 24 points) for the
#           README table with the head_dim 64 long-full rule;
#   PART=3: the head_dim 64 tall-tile draft (DASH_BWD_SM90_D64_BM=96 / 112; compile-checked only so
#           far): BwdSm90D64TallTiles (DASH_TEST_SM90_DRAFT=1), memcheck / racecheck / synccheck of
#           small 96- and 112-row launches, then 2 interleaved rounds of `dash-attn bench` at hdim 64
#           full and causal 1k-16k, 80 rows (the default) against 96 and 112 for atomic / shift / spt
#           / descending.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next26
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  TEST_FILTER='*' LIMIT_S=${LIMIT_S:-240} bash scripts/gpu-bwd-tests.sh "$O"
  echo "== bench $(el)"
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json | grep -E " auto "
elif [ "${PART:-1}" = 2 ]; then
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
else
  echo "== tall-tile draft tests $(el)"
  DASH_TEST_SM90_DRAFT=1 timeout -k 5 300 bins/new/dash_gpu_tests --gtest_filter='BwdSm90D64TallTiles.*:BwdSm90TileRule.*' \
    > "$O/bm96-tests.log" 2>&1
  echo "rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/bm96-tests.log" | tr '\n' ' ')"
  grep -E "Failure|FAILED" "$O/bm96-tests.log" | head -5
  for tool in memcheck racecheck synccheck; do  # small shift and spt launches, full and causal
    for h in 96 112; do
      for c in 0 1; do
        DASH_BWD_SM90_D64_BM=$h timeout -k 5 120 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 64 \
          --causal $c --seqlen 1100 --batch 1 --heads 2 --kv-heads 1 --schedules shift,spt --reps 1 > "$O/san$h-$tool-c$c.log" 2>&1
        echo "$tool $h causal $c rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san$h-$tool-c$c.log" | tr '\n' ' ')"
      done
    done
  done
  d64_height_ab "80 96 112" atomic,shift,spt,descending
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
