#!/usr/bin/env bash
# GPU machine (forty-third session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests). Energy per FLOP of our
# backward at the power cap, full against causal masks in one call (docs/perf.md v44 item 3): v39 had our TFLOP/J at
# causal 16k 7% below full 16k's while cuDNN's was the same at both; next111-113 found it the same for every causal
# schedule and tile (descending, spt, symmetric shift; 64 or 80 rows). `bench --sustain 2`, hdim 128, full 8k / 16k
# (shift = auto, descending) and causal 8k / 16k (descending = auto, spt, symmetric_shift), 2 interleaved rounds;
# then DASH_DEBUG_NO_REDUCE=1 (a diagnostic: no dQ reduce) at full 16k shift / causal 16k descending. The tables are
# scripts/sustain_ab.py's (the means, and no reduce over the defaults); next114 / next114b's run.log has the same means
# from an inline summary this script had then (da9cd52).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next114
main() {
  cat "$O/machine.txt"
  for r in 1 2; do
    for m in full causal; do
      c=0 sch=shift,descending; [ $m = causal ] && c=1 sch=descending,spt,symmetric_shift
      timeout -k 5 150 bins/new/dash-attn bench --hdim 128 --causal $c --seqlen 8192,16384 --schedules $sch --reps 3 \
        --sustain 2 --json "$O/sus-$m-r$r.json" > "$O/sus-$m-r$r.log" 2>&1 || echo "bench $m r$r rc $?"
    done
    for m in full causal; do
      c=0 sch=shift; [ $m = causal ] && c=1 sch=descending
      DASH_DEBUG_NO_REDUCE=1 timeout -k 5 150 bins/new/dash-attn bench --hdim 128 --causal $c --seqlen 16384 --schedules $sch \
        --reps 3 --sustain 2 --json "$O/nored-$m-r$r.json" > "$O/nored-$m-r$r.log" 2>&1 || echo "nored $m r$r rc $?"
    done
    echo "round $r $(el)"; save
  done
  for m in full causal; do
    python3 scripts/sustain_ab.py "$O/sus-$m-r1.json,$O/sus-$m-r2.json" "$O/nored-$m-r1.json,$O/nored-$m-r2.json"
  done
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
mkdir -p "$DEST"; tar czf "$DEST/part1.tgz" -C "$O" . && cp "$O/run.log" "$DEST/"
