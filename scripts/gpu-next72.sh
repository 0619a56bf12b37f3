#!/usr/bin/env bash
# GPU machine (twenty-ninth session). Everything goes into $OUT/all.tgz. .snap: bins/new = HEAD.
#   PART=1: DASH_BWD_QDO_FIRST=1 (the loader issues a side's first Q / dO before the side's K / V):
#          its tests (BwdSm90QdoFirst.*), the determinism / split / two-buffer / PDL tests with it on,
#          the sanitizers on one launch with it on (64- and 80-row tiles, GQA), then the A/B
#          (switch_ab: 2 interleaved rounds, 512-4k, hdim 128 / 64, full / causal, five schedules)
#          and whether both sides gave the same grad_hash.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next72
{
if [ "${PART:-1}" = 1 ]; then
  echo "== A/B $(el)"
  switch_ab DASH_BWD_QDO_FIRST "128 64" "0 1" descending,ascending,spt,shift,atomic 512,1024,2048,4096
  python3 - "$O" <<'PY'
import json, sys, glob
O = sys.argv[1]
h = {}
for f in glob.glob(f"{O}/ab-DASH_BWD_QDO_FIRST-v*-r*.json"):
    v = f.split("-v")[1][0]
    for row in json.load(open(f)):
        if row["schedule"] == "atomic": continue
        h.setdefault((row["hdim"], row["causal"], row["seqlen"], row["schedule"]), set()).add(row["grad_hash"])
bad = [k for k, s in h.items() if len(s) != 1]
print(f"grad_hash: {len(h) - len(bad)} of {len(h)} deterministic rows equal across both sides and rounds; differing: {bad[:5]}")
PY
  echo "== tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='BwdSm90QdoFirst.*' > "$O/t-qdo.log" 2>&1
  echo "qdo tests rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/t-qdo.log" | tr '\n' ' ') $(el)"
  DASH_BWD_QDO_FIRST=1 timeout -k 5 240 bins/new/dash_gpu_tests \
    --gtest_filter='BwdSm90Determinism*:BwdSm90LastWaveSplit*:BwdSm90Dq2*:BwdSm90Pdl*:BwdSm90Auto*:BwdSm90TakeAhead*' > "$O/t-on.log" 2>&1
  echo "tests with it on rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/t-on.log" | tr '\n' ' ') $(el)"
  grep -E "^\[  FAILED" "$O/t-qdo.log" "$O/t-on.log" | head -20
  echo "== sanitizers $(el)"
  for tool in memcheck synccheck racecheck; do
    for cfg in "128 0 1000" "128 1 1000" "64 0 700"; do
      [ $tool = racecheck ] && [ "$cfg" != "128 0 1000" ] && continue
      set -- $cfg
      DASH_BWD_QDO_FIRST=1 timeout -k 5 100 compute-sanitizer --tool $tool bins/new/dash-attn bench \
        --hdim $1 --causal $2 --seqlen $3 --batch 1 --heads 4 --kv-heads 2 --schedules descending,shift,atomic --reps 1 \
        > "$O/san-$tool-$1-$2.log" 2>&1
      echo "$tool $cfg rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool-$1-$2.log" | tr '\n' ' ')"
    done
  done
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
