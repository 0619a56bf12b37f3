#!/usr/bin/env bash
# GPU machine (twenty-seventh session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD: the split where the pieces fit one wave): the GPU suites not run in
#          gpu-next62 (API validation, PDL, the 16-byte preprocess, CUDA graphs, fallback, head blocks,
#          take-ahead, two writers, early dV, split rank, tile rules, the producer split, determinism
#          across schedules, the launcher, the sanitizer suite, Grid/Accuracy) and the split test again;
#          then the package and the Python suite.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next64
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  timeout -k 5 300 bins/new/dash_gpu_tests --gtest_filter='ApiValidation.*:BwdSm90Pdl*:BwdSm90PreVec*:BwdSm90Graph*:BwdSm90Fallback*:BwdSm90HeadBlock*:BwdSm90TakeAhead*:BwdSm90DualWriter*:BwdSm90EarlyDv*:BwdSm90SplitRank*:BwdSm90TileRule*:BwdSm90ProducerSplit*:DeterminismAcrossSchedules*:Launcher*:Sanitize*:Grid/Accuracy*:*LastWaveSplit*' > "$O/tests.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -20
  install_head && cd "$R" || exit 1
  echo "== pytest $(el)"
  timeout -k 5 200 python -m pytest tests/python -q -p no:cacheprovider > "$O/pytest.log" 2>&1; echo "pytest rc $? $(el)"
  tail -3 "$O/pytest.log"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
