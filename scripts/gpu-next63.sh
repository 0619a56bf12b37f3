#!/usr/bin/env bash
# GPU machine (twenty-seventh session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD: the split only where tasks < 132, and atomic's last wave; the planner
#          simulates it): the split test, BwdSm90Auto and the determinism suite; then split on / off
#          (DASH_BWD_SPLIT_LAST) at shapes with fewer tasks than SMs, every schedule and auto, 2 rounds.
#   PART=2: `auto` at those shapes (the few-task shift rule), then the package and the standard peers
#          sweep (the paired forward phase's first GPU run).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next63
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='*LastWaveSplit*:*BwdSm90Auto*:Schedules/Determinism.*' > "$O/tests.log" 2>&1
  echo "rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -12
  echo "== few tasks $(el)"
  mkdir -p "$O/few"
  for r in 1 2; do
    for v in 0 1; do
      for sh in "128 1 8 8 1024" "128 1 4 4 2048" "128 1 2 2 4096" "128 1 32 4 1024" "64 1 8 8 1024" "64 2 2 2 2048"; do
        set -- $sh
        DASH_BWD_SPLIT_LAST=$v timeout -k 5 40 bins/new/dash-attn bench --hdim $1 --causal 0 --seqlen $5 --batch $2 \
          --heads $3 --kv-heads $4 --schedules ascending,descending,spt,shift,atomic,auto --reps 20 \
          --json "$O/few/few-d$1-b$2-h$3-$4-s$5-v$v-r$r.json" > /dev/null 2>&1 || echo "few $sh rc $?"
      done
    done
  done
  python3 - "$O/few" <<'PY'
import glob, json, os, sys
t = {}
for f in glob.glob(sys.argv[1] + "/*.json"):
    name = os.path.basename(f)[4:-5]
    shape, v = name.rsplit("-v", 1)
    v = int(v.split("-")[0])
    for row in json.load(open(f)):
        t.setdefault((shape, row["schedule"], v), []).append((row["bwd_ms"], row["ran"], row["split_tasks"], row["split_pieces"]))
shapes = sorted({k[0] for k in t})
for sh in shapes:
    print(sh)
    best = {v: min(min(x[0] for x in t[(sh, s, v)]) for s in ("ascending", "descending", "spt", "shift")) for v in (0, 1)}
    for s in ("ascending", "descending", "spt", "shift", "atomic", "auto"):
        a, b = min(t[(sh, s, 0)]), min(t[(sh, s, 1)])
        print(f"  {s:11s} off {a[0]:.4f} on {b[0]:.4f} ({b[2]}x{b[3]}, ran {b[1]})  on/off speed {a[0] / b[0]:.3f}  "
              f"vs best det (on) {best[1] / b[0]:.3f}")
PY
fi
if [ "${PART:-1}" = 2 ]; then
  echo "== auto at the few-task shapes (the shift rule) $(el)"
  mkdir -p "$O/auto"
  for sh in "128 1 8 8 1024" "128 1 4 4 2048" "128 1 2 2 4096" "128 1 32 4 1024" "64 1 8 8 1024" "64 2 2 2 2048"; do
    set -- $sh
    timeout -k 5 40 bins/new/dash-attn bench --hdim $1 --causal 0 --seqlen $5 --batch $2 --heads $3 --kv-heads $4 \
      --schedules descending,spt,shift,auto --reps 20 --json "$O/auto/auto-d$1-b$2-h$3-$4-s$5-r1.json" > "$O/auto/d$1-b$2-h$3-$4-s$5.log" 2>&1 || echo "auto $sh rc $?"
  done
  python3 scripts/auto_sweep.py "$O"/auto/*.json
  peers_from_head --rounds 3 --warmup 2 --reps 4 --budget-s 300
  python3 "$R/scripts/peers_table.py" "$O/peers.json" > "$O/table.md" 2>&1; tail -34 "$O/table.md"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
