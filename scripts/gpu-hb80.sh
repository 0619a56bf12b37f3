#!/usr/bin/env bash
# GPU machine, one call (sixteenth session): does the head-block interleave (DASH_HEAD_BLOCK=16,
# the 64-row tiles' default for ascending / descending / atomic; ScheduleModel::default_head_block
# gives 80-row tiles head-major order) recover descending's loss on 80-row tiles (docs/perf.md v17
# item 3)? From prebuilt binaries (bins.tgz: bins/new/dash-attn; carry [".snap"], `cd .snap &&
# bash scripts/gpu-hb80.sh`). Variants of one binary: def (defaults), t80 (DASH_BWD_SM90_BLOCK_M=80),
# t80hb (80 rows and DASH_HEAD_BLOCK=16); full masks, descending and atomic, ROUNDS interleaved.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-hb80-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
unset DASH_BWD_SM90_BLOCK_M DASH_HEAD_BLOCK DASH_BWD_SPLIT_RANK
[ -d bins ] || tar xzf bins.tgz
B=bins/new/dash-attn
run() {  # run NAME ROUND HDIM SEQLENS ENV...
  local n=$1 r=$2 d=$3 sl=$4; shift 4
  env "$@" timeout -k 5 100 $B bench --hdim "$d" --causal 0 --seqlen "$sl" --schedules descending,atomic \
    --json "$O/$n-r$r-hdim$d.json" > "$O/$n-r$r-hdim$d.log" 2>&1 || echo "$n r$r hdim $d rc $?"
}
for r in $(seq 1 "${ROUNDS:-2}"); do
  for d in 64 128; do
    sl=$([ $d = 64 ] && echo 1024,2048,4096,8192 || echo 2048,4096,8192)
    run def "$r" $d "$sl" DASH_NOTHING=1
    run t80 "$r" $d "$sl" DASH_BWD_SM90_BLOCK_M=80
    run t80hb "$r" $d "$sl" DASH_BWD_SM90_BLOCK_M=80 DASH_HEAD_BLOCK=16
  done
  echo "round $r $(el)"
done
python3 - "$O" <<'PY' | tee "$O/summary.txt"
import glob, json, sys, collections
best = collections.defaultdict(dict); hashes = collections.defaultdict(set)
for f in glob.glob(f"{sys.argv[1]}/*-r*-hdim*.json"):
    v = f.split("/")[-1].split("-")[0]
    for e in json.load(open(f)):
        k = (e["hdim"], e["seqlen"], e["schedule"])
        best[k][v] = min(best[k].get(v, 1e9), e["bwd_ms"])
        if e["schedule"] != "atomic" and v != "def": hashes[k].add(e["grad_hash"])
for k in sorted(best):
    b = best[k]
    print(f"hdim {k[0]:3} {k[1]:5} {k[2]:10} def {b.get('def',0):7.3f}  t80 {b.get('t80',0):7.3f}  t80hb {b.get('t80hb',0):7.3f}"
          f"  t80hb/t80 {b['t80']/b['t80hb']:.3f}  t80hb/def {b['def']/b['t80hb']:.3f}"
          + (f"  bits t80==t80hb {len(hashes[k]) == 1}" if k[2] != "atomic" else ""))
PY
echo "total $(el)"
tar czf "$DEST/all.tgz" -C "$O" .
