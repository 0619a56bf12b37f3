#!/usr/bin/env bash
# GPU machine: Nsight Compute on the backward main kernel, one launch per schedule, for one
# shape of the standard sweep (16k tokens, hidden 2048). Answers "what limits the kernel":
# tensor-pipe utilisation, issue stalls, L2/DRAM traffic, and, between a deterministic schedule
# and `atomic`, where the ordered dQ chain costs time.
#   HDIM (128) CAUSAL (0) SEQLEN (16384) SCHEDULES ("atomic descending shift")
#   SET ("full" | "detailed"): the ncu section set;  BUILD_DIR (build, must be built)
#   WHAT=fwd: the forward kernel instead (attn_fwd_sm90, the third launch: after the bench's warm-up
#   forwards; the schedule does not matter, so SCHEDULES defaults to descending alone)
# Output in $OUT (or ./profile-logs): bwd-<schedule>.ncu-rep, bwd-<schedule>.txt (details page)
# and bwd-<schedule>-sass.csv (source page: stall samples per SASS instruction); fwd-... with WHAT=fwd.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/profile-logs}
mkdir -p "$OUT"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
[ -n "$NCU" ] || { echo "ncu not found"; exit 1; }
BIN=${BUILD_DIR:-build}/dash-attn
[ -x "$BIN" ] || { echo "$BIN not built"; exit 1; }
HDIM=${HDIM:-128}; CAUSAL=${CAUSAL:-0}; SEQLEN=${SEQLEN:-16384}
WHAT=${WHAT:-bwd}
# REPS: the bench's timed launches (one warm-up launch before them): the forward profiles the third of
# its launches, so it needs --reps >= 2 (gpu-next55.sh's first try ran --reps 1: nothing profiled).
if [ "$WHAT" = fwd ]; then KRE='attn_fwd_sm90'; SKIP=2; DEF_SCHED=descending; REPS=3
else KRE='attn_bwd_(sm90_)?main'; SKIP=1; DEF_SCHED="atomic descending shift"; REPS=1; fi
for sched in ${SCHEDULES:-$DEF_SCHED}; do
  N="$WHAT-$sched"
  # Skip the warm-up launches (and for the backward the forward).
  "$NCU" --clock-control none --set "${SET:-full}" --kernel-name regex:"$KRE" \
      --launch-skip "$SKIP" --launch-count 1 -f -o "$OUT/$N" \
      "$BIN" bench --hdim "$HDIM" --causal "$CAUSAL" --seqlen "$SEQLEN" --schedules "$sched" --reps $REPS \
      > "$OUT/$N.log" 2>&1 || { tail -20 "$OUT/$N.log"; continue; }
  "$NCU" --import "$OUT/$N.ncu-rep" --page details > "$OUT/$N.txt" 2>&1
  # per-SASS-instruction warp-stall samples (SourceCounters), for scripts/ncu_stalls.py
  "$NCU" --import "$OUT/$N.ncu-rep" --page source --csv --print-source sass \
      > "$OUT/$N-sass.csv" 2> "$OUT/$N-sass.err" || echo "source page failed: $(head -3 "$OUT/$N-sass.err")"
  echo "== $N"; grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Hit Rate|Registers Per|Achieved Occupancy|Tensor|Issue Slots Busy|No Eligible" "$OUT/$N.txt" | head -14
done
