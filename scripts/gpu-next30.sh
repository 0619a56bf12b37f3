#!/usr/bin/env bash
# GPU machine (twentieth session), bin-only (.snap with scripts/ and bins.tgz): causal ascending at
# hdim 64 on 96-row tiles (the default since this commit): the tests the tile rule touches, in 4
# shards, the sanitizers on the causal tall-tile test's shapes, and `dash-attn bench` of ascending
# causal (the tile height it ran). Everything goes into $OUT/all.tgz.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next30
{
echo "== tests $(el)"
DASH_TEST_WATCHDOG_S=60 GTEST_FILTER='BwdSm90D64CausalBm80.*:BwdSm90TileRule.*:BwdSm90Auto.*:*scending*:BwdSm90D64Bm80.*' \
  bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$O" ${LIMIT_S:-150}
for tool in memcheck racecheck; do
  timeout -k 5 60 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 64 --causal 1 --seqlen 1100 --batch 1 \
    --heads 2 --kv-heads 1 --schedules ascending --reps 1 > "$O/san-$tool.log" 2>&1
  echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
done
echo "== bench $(el)"
timeout -k 5 60 bins/new/dash-attn bench --hdim 64 --causal 1 --schedules ascending,descending --json "$O/casc.json" > "$O/casc.log" 2>&1
python3 scripts/bench_rows.py "$O/casc.json"
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
