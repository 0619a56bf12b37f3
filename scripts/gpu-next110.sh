#!/usr/bin/env bash
# GPU machine (forty-first session). .snap as for gpu-next105.sh (bins.txz: bins/new = dash-attn and
# dash_gpu_tests; head.tgz = `git archive HEAD`, copied to the repo root first). The backward's DRAM traffic
# and its speed at the power cap, per configuration (docs/perf.md v42):
#   1. ncu (4 metrics: DRAM bytes read / written, L2 hit rate, duration) of the main kernel at hdim 128 for
#      each NCU_SHAPES word causal,seqlen,schedule (default "0,8192,descending 0,16384,auto
#      1,16384,descending"), def against each of NCU_CFGS (default a).
#   2. `dash-attn bench --sustain 2` at hdim 128 full / causal 8k / 16k, schedules SCHEDS (auto,descending):
#      def and CFGS (a b c), interleaved ROUNDS (2) times; scripts/sustain_ab.py tables, and every row's
#      gradient hash against def's.
# Configurations (cfg_env): def; hbN (DASH_HEAD_BLOCK=N), on any build. Built from beef5a2 only (their
# switches were measured, rejected and removed after it): a-e (uniform L2 hints DASH_BWD_L2_KV / _QDO / _DQ),
# hmN (DASH_BWD_L2_HEADS=N: 1 / N of the heads evict_last, the rest evict_first; K / V evict_first), spN
# (DASH_BWD_SERPENTINE=N: descending's odd runs of N KV tiles ascend); SERP_TESTS=1 first runs the descending
# accuracy tests and DeterminismAcrossSchedules under DASH_BWD_SERPENTINE=2 (bins/new/dash_gpu_tests).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
# configuration name -> its environment
cfg_env() {
  case $1 in
    def) echo "" ;;
    a) echo "DASH_BWD_L2_KV=first DASH_BWD_L2_QDO=last DASH_BWD_L2_DQ=last" ;;
    b) echo "DASH_BWD_L2_KV=first DASH_BWD_L2_QDO=lasthalf DASH_BWD_L2_DQ=lasthalf" ;;
    c) echo "DASH_BWD_L2_DQ=last" ;;
    d) echo "DASH_BWD_L2_KV=first" ;;
    e) echo "DASH_BWD_L2_QDO=last DASH_BWD_L2_DQ=first" ;;
    hb*) echo "DASH_HEAD_BLOCK=${1#hb}" ;;
    hm*) echo "DASH_BWD_L2_HEADS=${1#hm} DASH_BWD_L2_KV=first" ;;
    sp*) echo "DASH_BWD_SERPENTINE=${1#sp}" ;;
  esac
}
hints_run() {
  cat "$O/machine.txt"
  if [ "${SERP_TESTS:-0}" = 1 ]; then
    DASH_BWD_SERPENTINE=2 timeout -k 5 150 bins/new/dash_gpu_tests \
      --gtest_filter='*Accuracy*descending*:DeterminismAcrossSchedules.*' > "$O/serp-tests.log" 2>&1
    echo "serpentine tests rc $? $(el): $(grep -E '^\[  (PASSED|FAILED)' "$O/serp-tests.log" | tr '\n' ' ')"
    grep -E '^\[  FAILED' "$O/serp-tests.log" | head -5
  fi
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
  if [ "${NCU_RUN:-1}" = 1 ] && [ -n "$NCU" ]; then
    for shape in ${NCU_SHAPES:-0,8192,descending 0,16384,auto 1,16384,descending}; do
      set -- ${shape//,/ }
      for cfg in def ${NCU_CFGS:-a}; do
        env $(cfg_env $cfg) timeout -k 5 90 "$NCU" --clock-control none --metrics $M --kernel-name regex:'attn_bwd_(sm90_)?main' \
          --launch-skip 1 --launch-count 1 --csv bins/new/dash-attn bench --hdim 128 --causal $1 --seqlen $2 \
          --schedules $3 --reps 1 > "$O/ncu-$cfg-c$1-s$2-$3.csv" 2>&1 || echo "ncu $cfg $shape rc $?"
        echo "== ncu $cfg causal=$1 seqlen=$2 $3: $(grep -E 'dram__bytes|lts__t_sector_hit|gpu__time' "$O/ncu-$cfg-c$1-s$2-$3.csv" \
          | awk -F'","' '{gsub(/"/,"",$NF); printf "%s=%s %s  ", $(NF-2), $NF, $(NF-1)}')"
      done
    done
    echo "ncu done $(el)"
  fi
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for cfg in def ${CFGS:-a b c}; do
      env $(cfg_env $cfg) timeout -k 5 120 bins/new/dash-attn bench --hdim 128 --causal 0,1 --seqlen 8192,16384 \
        --schedules ${SCHEDS:-auto,descending} --reps 3 --sustain 2 --json "$O/sus-$cfg-r$r.json" > "$O/sus-$cfg-r$r.log" 2>&1 \
        || echo "bench $cfg r$r rc $?"
    done
    echo "round $r $(el)"
  done
  echo "== means of the per-round ratios over def"
  python3 scripts/sustain_ab.py $(for c in def ${CFGS:-a b c}; do
    echo "$O/sus-$c-r1.json$(for r in $(seq 2 "${ROUNDS:-2}"); do echo -n ",$O/sus-$c-r$r.json"; done)"; done)
  echo "== gradient hashes (every configuration, every round) against def r1"
  python3 - "$O" <<'PY'
import glob, json, os, sys
o = sys.argv[1]
key = lambda r: (r["hdim"], r["causal"], r["seqlen"], r["schedule"])
base = {key(r): r["grad_hash"] for r in json.load(open(f"{o}/sus-def-r1.json"))}
for f in sorted(glob.glob(f"{o}/sus-*.json")):
    rows = json.load(open(f))
    same = sum(base.get(key(r)) == r["grad_hash"] for r in rows)
    print(os.path.basename(f), f"{same}/{len(rows)} rows with def r1's grad_hash")
PY
  echo "total $(el)"
}
gpu_setup gpu-next110
hints_run 2>&1 | tee "$O/run.log"
mkdir -p "$DEST"
tar czf "$DEST/part1.tgz" -C "$O" . && cp "$O/run.log" "$DEST/"
