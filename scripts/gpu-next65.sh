#!/usr/bin/env bash
# GPU machine (twenty-seventh session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD): `auto` against the explicit shift row at the few-task shapes of
#          gpu-next63 (auto ran shift there at 0.86-0.94 of the shift row's time in one round): 3
#          interleaved rounds, 50 reps, shift and auto only, auto first in half the rounds.
#   PART=2 (the early resolution draft): BwdSm90Auto and the API tests with DASH_BWD_AUTO_EARLY=1, then
#          PART=1's rounds with it (not yet run: no device time was left in the twenty-seventh session).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next65
{
if [ "${PART:-1}" = 2 ]; then
  export DASH_BWD_AUTO_EARLY=1
  timeout -k 5 100 bins/new/dash_gpu_tests --gtest_filter='*BwdSm90Auto*:ApiValidation.*:DeterminismAcrossSchedules*' > "$O/tests.log" 2>&1
  echo "tests rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -8
fi
if [ "${PART:-1}" -ge 1 ]; then
  mkdir -p "$O/auto"
  for r in 1 2 3; do
    order=$([ $((r % 2)) = 1 ] && echo auto,shift || echo shift,auto)
    for sh in "128 1 8 8 1024" "128 1 4 4 2048" "64 1 8 8 1024" "64 2 2 2 2048"; do
      set -- $sh
      timeout -k 5 40 bins/new/dash-attn bench --hdim $1 --causal 0 --seqlen $5 --batch $2 --heads $3 --kv-heads $4 \
        --schedules $order --reps 50 --json "$O/auto/auto-d$1-b$2-h$3-$4-s$5-r$r.json" > /dev/null 2>&1 || echo "auto $sh rc $?"
    done
  done
  python3 scripts/auto_sweep.py "$O"/auto/*.json
  python3 - "$O/auto" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    rows = json.load(open(f))
    print(f.rsplit("/", 1)[1], " ".join(f"{r['schedule']}({r['ran']}) {r['bwd_ms']:.4f}" for r in rows))
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
