# Sourced by the device scripts (gpu-s18d.sh, gpu-next19.sh): `gpu_setup NAME` after
# `cd` to the repository root sets DEST ($OUT, or ./NAME-logs), O (a fresh scratch dir), el (the
# elapsed seconds as "(N s)"), PATH and MAX_JOBS; unsets the backward's selection switches so that
# the defaults run; unpacks bins.tgz; records the GPU's clocks and power in $O/machine.txt.
gpu_setup() {
  DEST=${OUT:-$PWD/$1-logs}; O=$(mktemp -d); mkdir -p "$DEST"
  T0=$(date +%s)
  export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
  unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SPLIT_RANK DASH_HEAD_BLOCK DASH_DEBUG_UNORDERED DASH_BWD_WRITER_RANK \
    DASH_BWD_WRITER_RANK_CAUSAL DASH_BWD_SM90_PRODUCER24 DASH_BWD_SM90_FP16_BM80 DASH_BWD_SM90_D64_BM80 DASH_BWD_SM90_D64_CAUSAL_BM80 \
    DASH_BWD_SM90_D128_CAUSAL_BM80 DASH_BWD_SM90_D64_BM
  [ -d bins ] || tar xzf bins.tgz
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$O/machine.txt" 2>&1
}
el() { echo "($(( $(date +%s) - T0 )) s)"; }
# The package's pip install in the background (after gpu_setup: $O/pip.log, its last line "pip rc
# N"); pip_wait waits for it and prints that line. Not alongside the test shards: it starves them.
pip_bg() { (python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $?" >> "$O/pip.log") & }
pip_wait() { until grep -q "^pip rc" "$O/pip.log"; do sleep 2; done; tail -1 "$O/pip.log"; }
# `dash-attn bench` of every schedule (and auto), both masks, at head_dim 128 and 64, the defaults:
# $O/bench-hdim{128,64}.{json,log}.
bench_every_schedule() {
  for d in 128 64; do
    timeout -k 5 90 bins/new/dash-attn bench --hdim $d --schedules ascending,spt,descending,shift,symmetric_shift,atomic,auto \
      --json "$O/bench-hdim$d.json" > "$O/bench-hdim$d.log" 2>&1 || echo "bench hdim $d rc $?"
  done
}

# compute-sanitizer TOOL... on one gtest FILTER of bins/new/dash_gpu_tests (env as the caller's),
# logs $O/san-TOOL.log, one summary line per tool.
sanitize_filter() {
  local filter=$1; shift
  for tool in "$@"; do
    timeout -k 5 120 compute-sanitizer --tool "$tool" bins/new/dash_gpu_tests --gtest_filter="$filter" > "$O/san-$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$O/san-$tool.log" | tr '\n' ' ')"
  done
}
# ncu of `shift` at HDIM / SEQLEN, ordered and unordered (DASH_DEBUG_UNORDERED=1), with the hot
# loop's stall pieces (scripts/ncu_stalls.py --phases): $O/ncu/{bwd-shift-ordered,bwd-shift}*,
# phases-*.txt (gpu-next20.sh PART=3, gpu-next21.sh PART=2).
ncu_shift_ordered_unordered() {
  mkdir -p "$O/ncu"
  OUT="$O/ncu" BUILD_DIR=bins/new HDIM=$1 SEQLEN=$2 SCHEDULES=shift bash scripts/profile-bwd.sh
  mv "$O/ncu/bwd-shift-sass.csv" "$O/ncu/bwd-shift-ordered-sass.csv"; mv "$O/ncu/bwd-shift.txt" "$O/ncu/bwd-shift-ordered.txt"
  OUT="$O/ncu" BUILD_DIR=bins/new HDIM=$1 SEQLEN=$2 SCHEDULES=shift DASH_DEBUG_UNORDERED=1 bash scripts/profile-bwd.sh
  rm -f "$O"/ncu/*.ncu-rep
  for v in shift-ordered shift; do
    echo "== phases $v"; python3 scripts/ncu_stalls.py "$O/ncu/bwd-$v-sass.csv" --phases --top 12 > "$O/ncu/phases-$v.txt" 2>&1
    head -40 "$O/ncu/phases-$v.txt"
  done
}
