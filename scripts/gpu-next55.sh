#!/usr/bin/env bash
# GPU machine (twenty-sixth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD's default build):
#     (a) the last-wave question: every full-mask shape of the standard sweep has 2048 (hdim 128) or
#         4096 (hdim 64) equal work units (forward Q tiles, backward KV tasks) on 132 SMs, i.e. 15.52
#         (31.03) waves. `dash-attn bench` at hdim 128 full 4k / 8k with batch x heads = 60, 62, 64,
#         66 (x 32 or x 64 units: 14.5, 15.0, 15.5, 16.0 waves) and hdim 64 full 4k with 124, 128,
#         132: if the last wave is idle time, TFLOP/s at 64 is ~3% below 66 (scripts/wave_table.py);
#     (b) the peers dry-run pytest (tests/python/test_examples.py -k peers, CPU);
#     (c) gpu-next54.sh's forward ncu stall phases.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next55
{
if [ "${PART:-1}" = 1 ]; then
  echo "== waves $(el)"
  mkdir -p "$O/waves"
  for r in 1 2; do
    for sb in "4096 2 30" "4096 2 31" "4096 4 16" "4096 2 33" "8192 1 30" "8192 1 31" "8192 2 16" "8192 1 33"; do
      set -- $sb
      timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen $1 --batch $2 --heads $3 --kv-heads $3 \
        --schedules auto,atomic --reps 20 --json "$O/waves/d128-s$1-b$2-h$3-r$r.json" > /dev/null 2>&1 || echo "bench $sb rc $?"
    done
    for bh in "4 31" "4 32" "4 33"; do
      set -- $bh
      timeout -k 5 60 bins/new/dash-attn bench --hdim 64 --causal 0 --seqlen 4096 --batch $1 --heads $2 --kv-heads $2 \
        --schedules auto,atomic --reps 20 --json "$O/waves/d64-s4096-b$1-h$2-r$r.json" > /dev/null 2>&1 || echo "bench d64 $1 $2 rc $?"
    done
  done
  python3 scripts/wave_table.py "$O"/waves/*.json
  echo "== peers dry-run pytest $(el)"
  timeout -k 5 120 python -m pytest tests/python/test_examples.py -k peers -q -p no:cacheprovider > "$O/pytest-peers.log" 2>&1
  echo "rc $?"; tail -3 "$O/pytest-peers.log"
  for shape in "128 0" "64 0"; do fwd_stall_phases $shape; done
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
