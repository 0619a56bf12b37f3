#!/usr/bin/env bash
# GPU machine (twenty-eighth session). Everything goes into $OUT/all.tgz.
#   .snap: bins/new = HEAD (+ host_path, the probe bench/probes/host_path.cu).
#   PART=1: (a) the host-path probe; (b) shift's pieces: the split test, the rank, auto and switch
#          tests, determinism, the sanitizers on a split shift launch; (c) A/B: DASH_BWD_SPLIT_LAST=0 / default
#          at the few-task shapes of gpu-next63 (shift, descending, auto), 2 interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next68
{
if [ "${PART:-1}" = 1 ]; then
  echo "== host path probe $(el)"
  timeout -k 5 60 bins/new/host_path > "$O/host_path.txt" 2>&1; echo "probe rc $?"; cat "$O/host_path.txt"
  echo "== tests $(el)"
  timeout -k 5 300 bins/new/dash_gpu_tests --gtest_filter='*LastWaveSplit*:BwdSm90SplitRank.*:*BwdSm90Auto*:DeterminismAcrossSchedules*:EnvSwitches.*:ApiValidation.*:*Switch*:BwdSm90DualWriter*:BwdSm90TakeAhead*:BwdSm90Pdl*' > "$O/tests.log" 2>&1
  echo "tests rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -12
  for tool in memcheck racecheck synccheck; do
    timeout -k 5 100 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 1000 --batch 1 \
      --heads 8 --kv-heads 2 --schedules shift,descending --reps 1 > "$O/san-$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
  done
  echo "== A/B $(el)"
  mkdir -p "$O/ab"
  for r in 1 2; do
    for v in 0 1; do
      for sh in "128 1 8 8 1024" "128 1 4 4 2048" "128 1 2 2 4096" "128 1 32 4 1024" "64 1 8 8 1024" "64 2 2 2 2048"; do
        set -- $sh
        DASH_BWD_SPLIT_LAST=$v timeout -k 5 40 bins/new/dash-attn bench --hdim $1 --causal 0 --seqlen $5 --batch $2 --heads $3 --kv-heads $4 \
          --schedules shift,descending,spt,auto --reps 30 --json "$O/ab/v$v-d$1-b$2-h$3-$4-s$5-r$r.json" > /dev/null 2>&1 || echo "ab $v $sh rc $?"
      done
    done
  done
  python3 - "$O/ab" <<'PY'
import glob, json, sys, collections
t = collections.defaultdict(list)
for f in glob.glob(sys.argv[1] + "/*.json"):
    v, shape = f.rsplit("/", 1)[1].split("-", 1)
    shape = shape.rsplit("-r", 1)[0]
    for row in json.load(open(f)):
        t[(shape, v, row["schedule"])].append((row["bwd_ms"], row["ran"], row.get("split_pieces"), row["block_m"], row.get("dq_stage_bufs"), row.get("writer_rank")))
print("shape: schedule unsplit ms / split ms (min of 2) [pieces, block_m, bufs, wrank]: split speedup")
for shape in sorted({k[0] for k in t}):
    print(shape)
    for sc in ("shift", "descending", "spt", "auto"):
        a, b = min(t[(shape, "v0", sc)]), min(t[(shape, "v1", sc)])
        print(f"   {sc:10s} ran {b[1]:10s} {a[0]:.4f} / {b[0]:.4f} [{b[2]}, {b[3]}, {b[4]}, {b[5]}] {a[0] / b[0]:.3f}")
    best = min((min(t[(shape, 'v1', sc)])[0], sc) for sc in ("shift", "descending", "spt"))
    print(f"   split: best {best[1]} {best[0]:.4f}; auto / best {best[0] / min(t[(shape, 'v1', 'auto')])[0]:.3f}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
