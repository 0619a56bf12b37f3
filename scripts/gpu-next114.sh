#!/usr/bin/env bash
# GPU machine (forty-third session). .snap: bins.txz (bins/new = HEAD's dash-attn, dash_gpu_tests). Energy per FLOP of our
# backward at the power cap, full against causal masks in one call (docs/perf.md v44 item 3): v39 had our TFLOP/J at
# causal 16k 7% below full 16k's while cuDNN's was the same at both; next111-113 found it the same for every causal
# schedule and tile (descending, spt, symmetric shift; 64 or 80 rows). `bench --sustain 2`, hdim 128, full 8k / 16k
# (shift = auto, descending) and causal 8k / 16k (descending = auto, spt, symmetric_shift), 2 interleaved rounds;
# then DASH_DEBUG_NO_REDUCE=1 (a diagnostic: no dQ reduce) at full 16k shift / causal 16k descending.
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
  python3 - "$O" <<'PY'
import json, sys, glob, collections
acc = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + "/*-r[12].json")):
    tag = "nored" if "/nored-" in f else "def"
    for r in json.load(open(f)):
        if r.get("sustain_calls", 0) > 0:
            acc[(tag, "causal" if r["causal"] else "full", r["seqlen"], r["schedule"])].append(r)
print("cfg | mask | seqlen | schedule | TFLOP/s | W | MHz | TFLOP/J | TFLOP per Gcycle (means of 2 rounds)")
for k in sorted(acc):
    rs = acc[k]; m = lambda f: sum(r[f] for r in rs) / len(rs)
    print(f"{k[0]} | {k[1]} | {k[2]} | {k[3]} | {m('sustain_tflops'):.1f} | {m('sustain_watts'):.0f} | {m('sustain_mhz'):.0f} | "
          f"{m('sustain_tflop_per_j'):.4f} | {sum(r['sustain_tflops'] / r['sustain_mhz'] * 1000 for r in rs) / len(rs):.1f}")
PY
  echo "total $(el)"
}
main 2>&1 | tee "$O/run.log"
mkdir -p "$DEST"; tar czf "$DEST/part1.tgz" -C "$O" . && cp "$O/run.log" "$DEST/"
