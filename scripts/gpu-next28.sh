#!/usr/bin/env bash
# GPU machine (twentieth session), one call from the repository root with bins/ unpacked (tar xzf
# .snap/bins.tgz): the tests the gpu-next27.sh PART=1 suite left out (its shards 2 and 3 reached
# their 240 s limit in FwdSm90Fp16, every test run had passed) and the ones ascending's 96-row tiles
# at head_dim 64 full touch, in 4 shards; then pip install + pytest + the peers benchmark (all 24
# points) for the README table. Everything goes into $OUT/all.tgz.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next28
{
echo "== tests $(el)"
DASH_TEST_WATCHDOG_S=60 GTEST_FILTER='BwdSm90D128CausalBm80.*:BwdSm90D64TallTiles.*:BwdSm90LaggedDq.*:BwdSm90Repack.*:BwdSm90StridedStarts.*:BwdSm90WriterOverlap.*:Shapes/FwdSm90Bn176.*:Shapes/FwdSm90Fp16.*:BwdSm90D64Bm80.*:BwdSm90TileRule.*:BwdSm90Auto.*:*scending*' \
  bash scripts/gpu-suite-shards.sh bins/new/dash_gpu_tests "$O" ${LIMIT_S:-200}
echo "== pytest + peers $(el)"
PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-260} bash scripts/gpu-pytest-peers.sh "$O"
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
