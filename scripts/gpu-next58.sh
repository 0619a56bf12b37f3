#!/usr/bin/env bash
# GPU machine (twenty-sixth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD's default build with both planner changes; head.tgz = HEAD without
#          docs/data): the forward suite on the default binary (FwdSm90*: the Q-in-registers default
#          ran it only on the q1 variant build), BwdSm90Auto and the determinism suite; `auto` at the
#          two GQA causal 1000 shapes of gpu-next57 (spt -> the model's pick); then the package,
#          the peers dry run and the standard peers sweep (as gpu-next50.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next58
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='*FwdSm90*:*BwdSm90Auto*:Schedules/Determinism.*' > "$O/tests.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -12
  echo "== auto at GQA causal 1000 $(el)"
  mkdir -p "$O/auto"
  for r in 1 2; do
    for sh in "d128-2x32g8 128 32" "d64-2x64g8 64 64"; do
      set -- $sh
      timeout -k 5 60 bins/new/dash-attn bench --hdim $2 --causal 1 --seqlen 1000 --batch 2 --heads $3 --kv-heads 8 \
        --schedules spt,descending,auto --reps 10 --json "$O/auto/auto-$1-r$r.json" > "$O/auto/auto-$1-r$r.log" 2>&1 || echo "bench $1 rc $?"
    done
  done
  python3 scripts/auto_sweep.py "$O"/auto/*.json
  peers_from_head --rounds 3 --warmup 2 --reps 4 --budget-s 300
  (cd "$R" && timeout -k 5 120 python -m pytest -q tests/python/test_examples.py -k peers > "$O/pytest-peers.log" 2>&1)
  echo "pytest rc $? $(tail -1 "$O/pytest-peers.log") $(el)"
  python3 "$R/scripts/peers_table.py" "$O/peers.json" > "$O/table.md" 2>&1; tail -28 "$O/table.md"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
