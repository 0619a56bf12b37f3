#!/usr/bin/env bash
# GPU machine (twenty-sixth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD's default build; head.tgz = HEAD without docs/data): BwdSm90Auto
#          (auto now runs ascending at hdim 128 full 32-63 KV tiles), then the package and the whole
#          Python suite (tests/python; last run whole at a72dbe9).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next60
{
if [ "${PART:-1}" = 1 ]; then
  echo "== BwdSm90Auto $(el)"
  timeout -k 5 90 bins/new/dash_gpu_tests --gtest_filter='*BwdSm90Auto*:*Api*Auto*' > "$O/tests.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -12
  install_head && cd "$R" || exit 1
  echo "== pytest $(el)"
  timeout -k 5 240 python -m pytest tests/python -q -x -p no:cacheprovider > "$O/pytest.log" 2>&1; echo "pytest rc $? $(el)"
  tail -5 "$O/pytest.log"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
