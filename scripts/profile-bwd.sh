#!/usr/bin/env bash
# GPU machine: Nsight Compute on the backward main kernel, one launch per schedule, for one
# shape of the standard sweep (16k tokens, hidden 2048). Answers "what limits the kernel":
# tensor-pipe utilisation, issue stalls, L2/DRAM traffic, and, between a deterministic schedule
# and `atomic`, where the ordered dQ chain costs time.
#   HDIM (128) CAUSAL (0) SEQLEN (16384) SCHEDULES ("atomic descending shift")
#   SET ("full" | "detailed"): the ncu section set;  BUILD_DIR (build, must be built)
# Output in $OUT (or ./profile-logs): bwd-<schedule>.ncu-rep, bwd-<schedule>.txt (details page)
# and bwd-<schedule>-sass.csv (source page: stall samples per SASS instruction).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/profile-logs}
mkdir -p "$OUT"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
[ -n "$NCU" ] || { echo "ncu not found"; exit 1; }
BIN=${BUILD_DIR:-build}/dash-attn
[ -x "$BIN" ] || { echo "$BIN not built"; exit 1; }
HDIM=${HDIM:-128}; CAUSAL=${CAUSAL:-0}; SEQLEN=${SEQLEN:-16384}
for sched in ${SCHEDULES:-atomic descending shift}; do
  # --reps 1: one timed launch after the warm-up; skip the forward and the warm-up launches.
  "$NCU" --clock-control none --set "${SET:-full}" --kernel-name regex:'attn_bwd_(sm90_)?main' \
      --launch-skip 1 --launch-count 1 -f -o "$OUT/bwd-$sched" \
      "$BIN" bench --hdim "$HDIM" --causal "$CAUSAL" --seqlen "$SEQLEN" --schedules "$sched" --reps 1 \
      > "$OUT/bwd-$sched.log" 2>&1 || { tail -20 "$OUT/bwd-$sched.log"; continue; }
  "$NCU" --import "$OUT/bwd-$sched.ncu-rep" --page details > "$OUT/bwd-$sched.txt" 2>&1
  # per-SASS-instruction warp-stall samples (SourceCounters), for scripts/ncu_stalls.py
  "$NCU" --import "$OUT/bwd-$sched.ncu-rep" --page source --csv --print-source sass \
      > "$OUT/bwd-$sched-sass.csv" 2> "$OUT/bwd-$sched-sass.err" || echo "source page failed: $(head -3 "$OUT/bwd-$sched-sass.err")"
  echo "== $sched"; grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Hit Rate|Registers Per|Achieved Occupancy|Tensor|Issue Slots Busy|No Eligible" "$OUT/bwd-$sched.txt" | head -14
done
