#!/usr/bin/env bash
# GPU machine, one call (thirteenth session): the final test run of this build, then whether the
# bench's input distribution explains why `dash-attn bench` and peers disagreed on the 80-row tile
# at full 16k (docs/perf.md v14 items 3-4): hdim 128 full 4k / 16k, descending + atomic, 64 vs 80
# rows (DASH_BWD_SM90_BLOCK_M), uniform vs normal data (--dist), 2 interleaved rounds, with the SM
# clock and the board power sampled every 50 ms during each run (mean over samples above 150 W).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-dist-logs}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
[ -d bins ] || tar xzf bins.tgz
B=bins/new
echo "== GPU suite $(el)"
DASH_TEST_WATCHDOG_S=60 bash scripts/gpu-suite-shards.sh $B/dash_gpu_tests "$OUT" ${SUITE_LIMIT_S:-260}
echo "== distributions $(el)"
for r in 1 2; do
  for dist in uniform normal; do
    for bm in 64 80; do
      tag="r$r-$dist-bm$bm"
      nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 50 > "$OUT/smi-$tag.csv" 2>/dev/null &
      smi=$!
      DASH_BWD_SM90_BLOCK_M=$bm timeout -k 5 60 $B/dash-attn bench --hdim 128 --causal 0 --seqlen 4096,16384 \
        --schedules descending,atomic --dist $dist --json "$OUT/bench-$tag.json" > "$OUT/bench-$tag.log" 2>&1 || echo "bench $tag rc $?"
      kill $smi 2>/dev/null; wait $smi 2>/dev/null
    done
  done
done
python3 - "$OUT" <<'PY'
import glob, json, sys, statistics
out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(f"{out}/bench-r*-*.json")):
    _, r, dist, bm = f.rsplit("/", 1)[1][:-5].split("-")
    for e in json.load(open(f)):
        rows.setdefault((dist, e["seqlen"], e["schedule"], bm), []).append(e["bwd_ms"])
for k in sorted(rows):
    print(f"{k[0]:8} {k[1]:6} {k[2]:10} {k[3]}: bwd ms {' '.join(f'{x:.3f}' for x in rows[k])}")
for f in sorted(glob.glob(f"{out}/smi-*.csv")):
    s = [l.split(",") for l in open(f) if l.count(",") == 2]
    s = [(float(a), float(b), float(c)) for a, b, c in s if b.strip() not in ("", "[N/A]") and float(b) > 150]
    if s:
        print(f"{f.rsplit('/', 1)[1]:28} busy samples {len(s):4}  SM clock {statistics.mean(x[0] for x in s):6.0f} MHz"
              f"  power {statistics.mean(x[1] for x in s):5.0f} W  temp {max(x[2] for x in s):.0f} C")
PY
echo "total $(el)"
