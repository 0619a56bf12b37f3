# Sourced by the device scripts (gpu-s18d.sh, gpu-next19.sh): `gpu_setup NAME` after
# `cd` to the repository root sets DEST ($OUT, or ./NAME-logs), O (a fresh scratch dir), el (the
# elapsed seconds as "(N s)"), PATH and MAX_JOBS; unsets the backward's selection switches so that
# the defaults run; unpacks bins.txz or bins.tgz; records the GPU's clocks and power in $O/machine.txt.
gpu_setup() {
  DEST=${OUT:-$PWD/$1-logs}; O=$(mktemp -d); mkdir -p "$DEST"
  T0=$(date +%s)
  export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc)
  unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SPLIT_RANK DASH_HEAD_BLOCK DASH_DEBUG_UNORDERED DASH_BWD_WRITER_RANK \
    DASH_BWD_WRITER_RANK_CAUSAL DASH_BWD_SM90_PRODUCER24 DASH_BWD_SM90_FP16_BM80 DASH_BWD_SM90_D64_BM80 DASH_BWD_SM90_D64_CAUSAL_BM80 \
    DASH_BWD_SM90_D128_CAUSAL_BM80 DASH_BWD_SM90_D64_BM
  [ -d bins ] || { [ -f bins.txz ] && tar xJf bins.txz; } || tar xzf bins.tgz
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$O/machine.txt" 2>&1
}
el() { echo "($(( $(date +%s) - T0 )) s)"; }
# What has run so far into $DEST (part1.tgz of $O, and $O/run.log), after each phase: a call cut short by its
# limit still returns it. gpu-next111.sh .. gpu-next114.sh.
save() { tar czf "$DEST/part1.tgz" -C "$O" . 2>/dev/null; cp "$O/run.log" "$DEST/" 2>/dev/null; true; }
# sustain_rounds N "CFG ..." BENCH_ARGS...: N interleaved rounds of `bins/new/dash-attn bench BENCH_ARGS --sustain 2`,
# once per configuration CFG with the environment that the script's `cfg_env CFG` prints (nothing: the defaults),
# into $O/sus-CFG-rR.json / .log, saved after each round; then scripts/sustain_ab.py's table, the first CFG the base.
# gpu-next111.sh, gpu-next112.sh.
sustain_rounds() {
  local n=$1 cfgs=$2 r cfg; shift 2
  for r in $(seq "$n"); do
    for cfg in $cfgs; do
      env $(cfg_env "$cfg") timeout -k 5 150 bins/new/dash-attn bench "$@" --sustain 2 --json "$O/sus-$cfg-r$r.json" \
        > "$O/sus-$cfg-r$r.log" 2>&1 || echo "bench $cfg r$r rc $?"
    done
    echo "round $r $(el)"; save
  done
  python3 scripts/sustain_ab.py $(for cfg in $cfgs; do seq -f "$O/sus-$cfg-r%g.json" "$n" | paste -sd, -; done)
}
# gpu_setup, then the logs straight under $DEST ($OUT): O=$DEST, machine.txt there. gpu-next103.sh, gpu-next104.sh.
gpu_setup_flat() { gpu_setup "$1"; mv "$O/machine.txt" "$DEST/"; O=$DEST; }
# The SM clock and power every 250 ms ($O/clocks.csv) and phase marks ($O/marks.txt, `mark NAME` at each
# phase's start) for scripts/clock_phases.py: clocks_start, ..., clocks_stop (which prints the per-phase
# table). gpu-next103.sh, gpu-next104.sh.
mark() { echo "$(date +%s.%N) $*" >> "$O/marks.txt"; }
clocks_start() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 250 \
    > "$O/clocks.csv" 2>&1 &
  SMI=$!
}
clocks_stop() {
  kill "$SMI" 2>/dev/null
  python3 scripts/clock_phases.py "$O/clocks.csv" "$O/marks.txt" 2>&1 | tail -12
}
# The package's pip install in the background (after gpu_setup: $O/pip.log, its last line "pip rc
# N"); pip_wait waits for it and prints that line. Not alongside the test shards: it starves them.
pip_bg() { (python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $?" >> "$O/pip.log") & }
pip_wait() { until grep -q "^pip rc" "$O/pip.log"; do sleep 2; done; tail -1 "$O/pip.log"; }
# head.tgz unpacked to R=/tmp/h and its package's pip install started in the background ($O/pip.log,
# pip_wait waits for it), so that GPU tests can run meanwhile. gpu-next84.sh, gpu-next87.sh, gpu-next88.sh.
head_pip_bg() {
  mkdir -p /tmp/h && tar xzf head.tgz -C /tmp/h || return 1
  R=/tmp/h
  (cd "$R" && timeout -k 5 300 python -m pip install --no-build-isolation --no-deps . > "$O/pip.log" 2>&1; echo "pip rc $?" >> "$O/pip.log") &
}
# The command of an A/B configuration: old / new, the binaries bins/old and bins/new; hbB, bins/new with
# DASH_HEAD_BLOCK=B (hb16: the default, no variable). gpu-next99.sh, gpu-next100.sh, gpu-next101.sh, gpu-next102.sh.
ab_cmd() {
  case $1 in
    old|new) echo "bins/$1/dash-attn" ;;
    hb16) echo "bins/new/dash-attn" ;;
    hb*) echo "env DASH_HEAD_BLOCK=${1#hb} bins/new/dash-attn" ;;
  esac
}
# One A/B round R of the configurations CFG... (`dash-attn bench`: ascending / descending / auto, both masks,
# 2k-16k, head_dim 128 and 64): $O/ab-CFG-d{128,64}-rR.json for scripts/env_ab_table.py.
ab_round() {
  local r=$1 cfg d; shift
  for cfg in "$@"; do
    for d in 128 64; do
      timeout -k 5 120 $(ab_cmd "$cfg") bench --hdim $d --causal 0,1 --seqlen 2048,4096,8192,16384 \
        --schedules ascending,descending,auto --json "$O/ab-$cfg-d$d-r$r.json" > /dev/null 2>&1 || echo "bench $cfg d$d r$r rc $?"
    done
  done
}
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
# The head_dim 64 tile-height A/B: `d64_height_ab "80 96 112" SCHEDULES`: 2 interleaved rounds of
# `dash-attn bench` at hdim 64 full and causal 1k-16k per DASH_BWD_SM90_D64_BM height
# ($O/bm96-H-cC-rR.json), then each later height's speed / the first's per schedule and length (min
# of 2; the tile heights that ran; the later height's ms). gpu-next26.sh PART=3, gpu-next27.sh PART=1.
d64_height_ab() {
  local heights=$1 schedules=$2
  for r in 1 2; do
    for e in $heights; do
      for c in 0 1; do
        DASH_BWD_SM90_D64_BM=$e timeout -k 5 60 bins/new/dash-attn bench --hdim 64 --causal $c \
          --seqlen 1024,2048,4096,8192,16384 --schedules "$schedules" \
          --json "$O/bm96-$e-c$c-r$r.json" > /dev/null 2>&1 || echo "bench $e $c r$r rc $?"
      done
    done
  done
  python3 - "$O" "$heights" "$schedules" <<'PY'
import json, sys
O, heights, schedules = sys.argv[1], [int(h) for h in sys.argv[2].split()], sys.argv[3].split(",")
def load(e, c):
    t = {}
    for r in (1, 2):
        for row in json.load(open(f"{O}/bm96-{e}-c{c}-r{r}.json")):
            t.setdefault((row["schedule"], row["seqlen"]), []).append((row["bwd_ms"], row["block_m"]))
    return {k: min(v) for k, v in t.items()}
for c in (0, 1):
    a = load(heights[0], c)
    for h in heights[1:]:
        b = load(h, c)
        print(f"hdim 64 {'causal' if c else 'full'}: {h}-row speed / {heights[0]}-row (min of 2; the tile heights that ran; {h}-row ms)")
        for sc in schedules:
            print(f"  {sc:11s}" + "".join(f"  {a[(sc, s)][0] / b[(sc, s)][0]:.3f} ({a[(sc, s)][1]}/{b[(sc, s)][1]}; {b[(sc, s)][0]:.3f})"
                                          for s in (1024, 2048, 4096, 8192, 16384)))
PY
}
# A switch's A/B: `switch_ab VAR "HDIMS" "CAUSALS" SCHEDULES SEQLENS ["A B"] [ROUNDS]`: ROUNDS (2)
# interleaved rounds of `dash-attn bench` with VAR=A and VAR=B (default 0 and 1;
# $O/ab-VAR-vV-dD-cC-rR.json), then per head dim, mask and schedule the speed with VAR=B / with VAR=A
# (min of the rounds). gpu-next31.sh, gpu-next32.sh PART=3, gpu-next79.sh, gpu-next83.sh.
switch_ab() {
  local var=$1 hdims=$2 causals=$3 schedules=$4 seqlens=$5 values=${6:-"0 1"} rounds=${7:-2} r v d c
  for r in $(seq 1 "$rounds"); do
    for v in $values; do
      for d in $hdims; do
        for c in $causals; do
          env "$var=$v" timeout -k 5 60 bins/new/dash-attn bench --hdim "$d" --causal "$c" --seqlen "$seqlens" \
            --schedules "$schedules" --json "$O/ab-$var-v$v-d$d-c$c-r$r.json" > /dev/null 2>&1 || echo "bench $var=$v $d $c rc $?"
        done
      done
    done
  done
  python3 - "$O" "$var" "$hdims" "$causals" "$schedules" "$seqlens" "$values" "$rounds" <<'PY'
import json, sys
O, var, hdims, causals, schedules, seqlens, values, rounds = sys.argv[1:9]
seqlens = [int(s) for s in seqlens.split(",")]
va, vb = values.split()
rounds = int(rounds)
for d in hdims.split():
    for c in causals.split():
        t = {}
        for v in (va, vb):
            for r in range(1, rounds + 1):
                for row in json.load(open(f"{O}/ab-{var}-v{v}-d{d}-c{c}-r{r}.json")):
                    t.setdefault((v, row["schedule"], row["seqlen"]), []).append(row["bwd_ms"])
        for sc in schedules.split(","):
            print(f"hdim {d} {'causal' if c == '1' else 'full'} {sc:10s} {var}={vb} / ={va} speed (min of {rounds}; ={vb} ms): " + "  ".join(
                f"{s}: {min(t[(va, sc, s)]) / min(t[(vb, sc, s)]):.3f} ({min(t[(vb, sc, s)]):.3f})" for s in seqlens))
PY
}

# The 80-row staging-buffer A/B (gpu-next38.sh, gpu-next40.sh): `tall_ab "ENV_B" "ENV_C" [TOOL_ENV]`:
# the sanitizers (memcheck / racecheck / synccheck) on one 1000-row launch of descending, shift and
# atomic with ENV_C, then 2 interleaved rounds of `dash-attn bench` at hdim 128 full 1k-16k
# (descending, ascending, spt, shift, atomic) with (def) the defaults, (bm80) ENV_B and (dq2) ENV_C
# ($O/ab-CFG-rR.json); then TFLOP/s per config (min-time of 2 rounds, with the tile height and staging
# buffers that ran), dq2 / def and dq2 / bm80, whether bm80 and dq2 gave the same bits, and the best
# deterministic schedule of def and dq2 per length.
tall_ab() {
  local env_b=$1 env_c=$2
  echo "== sanitizers $(el)"
  for tool in memcheck racecheck synccheck; do
    env $env_c timeout -k 5 100 compute-sanitizer --tool $tool bins/new/dash-attn bench \
      --hdim 128 --causal 0 --seqlen 1000 --batch 1 --heads 4 --kv-heads 2 --schedules descending,shift,atomic --reps 1 \
      > "$O/san-$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/san-$tool.log" | tr '\n' ' ')"
  done
  echo "== A/B $(el)"
  for r in 1 2; do
    for cfg in def bm80 dq2; do
      case $cfg in
        def) envs="" ;;
        bm80) envs=$env_b ;;
        dq2) envs=$env_c ;;
      esac
      env $envs timeout -k 5 90 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 1024,2048,4096,8192,16384 \
        --schedules descending,ascending,spt,shift,atomic --json "$O/ab-$cfg-r$r.json" > "$O/ab-$cfg-r$r.log" 2>&1 || echo "bench $cfg r$r rc $?"
    done
  done
  python3 - "$O" "$env_b" "$env_c" <<'PY'
import json, sys
O = sys.argv[1]
t = {}
for cfg in ("def", "bm80", "dq2"):
    for r in (1, 2):
        try:
            rows = json.load(open(f"{O}/ab-{cfg}-r{r}.json"))
        except Exception as e:
            print(cfg, r, e); continue
        for row in rows:
            t.setdefault((cfg, row["schedule"], row["seqlen"]), []).append((row["bwd_ms"], row["block_m"], row.get("dq_stage_bufs"), row["bwd_tflops"], row["grad_hash"]))
seqs = sorted({k[2] for k in t})
print(f"hdim 128 full, TFLOP/s (min-time of 2 rounds) [block_m/bufs]; bm80: {sys.argv[2]}; dq2: {sys.argv[3]}; ratios dq2/def, dq2/bm80")
for sc in ("descending", "ascending", "spt", "shift", "atomic"):
    for s in seqs:
        v = {c: min(t[(c, sc, s)]) for c in ("def", "bm80", "dq2") if (c, sc, s) in t}
        if len(v) < 3: continue
        same = "bits= " if sc == "atomic" or v["bm80"][4] == v["dq2"][4] else "BITS DIFFER "
        print(f"{sc:10s} {s:6d} " + "  ".join(f"{c} {v[c][3]:6.1f} [{v[c][1]}/{v[c][2]}]" for c in v) +
              f"   dq2/def {v['def'][0] / v['dq2'][0]:.3f}  dq2/bm80 {v['bm80'][0] / v['dq2'][0]:.3f}  {same}")
best = {}
for s in seqs:
    for c in ("def", "dq2"):
        best[(c, s)] = min((min(t[(c, sc, s)])[0], sc) for sc in ("descending", "ascending", "spt", "shift") if (c, sc, s) in t)
    print(f"best det {s}: def {best[('def', s)][1]} {best[('def', s)][0]:.3f} ms, dq2 {best[('dq2', s)][1]} {best[('dq2', s)][0]:.3f} ms: {best[('def', s)][0] / best[('dq2', s)][0]:.3f}")
PY

}

# The whole GPU suite in SHARDS (6) shards with the sanitizers (gpu-bwd-tests.sh, LIMIT_S 320 s per
# shard), the lines of the tests named by the extended regex $1, then `dash-attn bench` of every
# schedule and auto's rows (gpu-next35.sh, gpu-next36.sh, gpu-next39.sh).
suite_and_bench() {
  echo "== tests $(el)"
  SHARDS=${SHARDS:-6} TEST_FILTER='*' LIMIT_S=${LIMIT_S:-320} bash scripts/gpu-bwd-tests.sh "$O"
  grep -h -E "$1" "$O"/gpu-shard*.log | grep -E "OK|FAILED" | head -6
  echo "== bench $(el)"
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json | grep -E " auto "
}
# Forward A/B of prebuilt binaries (gpu-next46/47/49/52.sh): ROUNDS interleaved rounds of
# `dash-attn bench` at hdim 64 and 128, full and causal, 1k-16k (normal data) for each of BINS
# (bins/NAME), then scripts/fwd_ab_table.py (speed over the first binary, fwd_hash against it).
# Usage: fwd_ab "old new" 3 [HDIMS (64,128)]
fwd_ab() {
  local bins=$1 rounds=$2 hdims=${3:-64,128} r b
  for r in $(seq 1 "$rounds"); do
    for b in $bins; do
      timeout -k 5 120 bins/$b/dash-attn bench --dist normal --hdim "$hdims" --causal 0,1 --seqlen 1024,2048,4096,8192,16384 \
        --schedules descending --json "$O/fwd-$b-r$r.json" > "$O/fwd-$b-r$r.log" 2>&1 || echo "bench $b r$r rc $?"
    done
  done
  python3 scripts/fwd_ab_table.py "$O" "${bins// /,}" "$rounds"
}
# ncu of the hdim 64 / 128 full 8k forward of each of BINS: time, instructions, tensor pipe, clock and
# any extra METRICS (comma-separated); one summary line per binary and head dim.
fwd_ncu() {
  local bins=$1 extra=${2:-} b d
  for b in $bins; do
    for d in 64 128; do
      timeout -k 5 120 ncu --clock-control none --kernel-name regex:attn_fwd_sm90 --launch-skip 2 --launch-count 1 \
        --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second${extra:+,$extra} \
        --csv bins/$b/dash-attn bench --dist normal --hdim $d --causal 0 --seqlen 8192 --schedules descending > "$O/ncu-$b-d$d.csv" 2> "$O/ncu-$b-d$d.err"
      echo "$b hdim $d: $(grep -E 'gpu__time|inst_executed|hmma|per_second|bank' "$O/ncu-$b-d$d.csv" | awk -F'","' '{print $(NF-2)"="$NF}' | tr -d '"' | tr '\n' ' ')"
    done
  done
}
# The package from head.tgz (a clean export of HEAD without docs/data, next to bins.tgz), installed
# from R=/tmp/h (left for the caller's tests and tables). gpu-next60.sh, peers_from_head.
install_head() {
  mkdir -p /tmp/h && tar xzf head.tgz -C /tmp/h || return 1
  R=/tmp/h
  echo "== pip $(el)"
  (cd "$R" && timeout -k 5 300 python -m pip install --no-build-isolation --no-deps . > "$O/pip.log" 2>&1)
  echo "pip rc $? $(el)"
}
# install_head, then one bench/peers.py run with PEERS ARGS... (besides --json $O/peers.json, --png
# $O/peers.png; budget as given). gpu-next58.sh, gpu-next59.sh.
peers_from_head() {
  install_head || return 1
  (cd /tmp && timeout -k 5 400 python "$R/bench/peers.py" "$@" --json "$O/peers.json" --png "$O/peers.png" \
    > "$O/peers.log" 2>&1); echo "peers rc $? $(el)"
}
# ncu of the forward at HDIM (full or causal, 8k; bins/new) with scripts/ncu_stalls.py's stall
# reasons and phases: $O/ncu/{d$1c$2/, stalls-d$1c$2.txt, phases-d$1c$2.txt}. gpu-next55.sh, gpu-next56.sh.
fwd_stall_phases() {
  local d=$1 c=$2 f
  mkdir -p "$O/ncu"
  echo "== forward ncu hdim $d causal $c 8k $(el)"
  OUT="$O/ncu/d${d}c$c" BUILD_DIR=bins/new WHAT=fwd HDIM=$d CAUSAL=$c SEQLEN=8192 timeout -k 5 150 bash scripts/profile-bwd.sh \
    > "$O/ncu/prof-d${d}c$c.log" 2>&1
  tail -16 "$O/ncu/prof-d${d}c$c.log"
  f="$O/ncu/d${d}c$c/fwd-descending-sass.csv"
  python3 scripts/ncu_stalls.py "$f" --top 25 > "$O/ncu/stalls-d${d}c$c.txt" 2>&1; head -40 "$O/ncu/stalls-d${d}c$c.txt"
  python3 scripts/ncu_stalls.py "$f" --phases > "$O/ncu/phases-d${d}c$c.txt" 2>&1; head -50 "$O/ncu/phases-d${d}c$c.txt"
  rm -f "$O"/ncu/d${d}c$c/*.ncu-rep
}
# The per-side timeline (bins/trace, -DDASH_BWD_TRACE=ON) of each "HDIM CAUSAL SCHEDULE SEQLEN" config,
# $O/trace/NAME.csv(.gz) + .log, then scripts/bwd_trace.py on them. With VAR=V1,V2 ... as the first
# argument (optional, e.g. DASH_BWD_POST_SMS=0,4) each config runs once per value, NAME ending -kV.
# gpu-next84.sh, gpu-next85.sh.
trace_sides() {
  local var="" vals="" v n cfg
  case "$1" in *=*) var=${1%%=*}; vals=${1#*=}; shift ;; esac
  mkdir -p "$O/trace"
  for cfg in "$@"; do
    set -- $cfg
    for v in $(echo "${vals:-none}" | tr , " "); do
      n=d$1-c$2-$3-$4${var:+-k$v}
      env ${var:+$var=$v} DASH_BWD_TRACE_FILE="$O/trace/$n.csv" timeout -k 5 60 bins/trace/dash-attn bench --hdim $1 \
        --causal $2 --seqlen $4 --schedules $3 --reps 3 > "$O/trace/$n.log" 2>&1 || echo "$n rc $?"
    done
  done
  python3 scripts/bwd_trace.py "$O"/trace/*.csv
  gzip -9 "$O"/trace/*.csv
}
# The Python suite and bench/peers.py (3 rounds) from the installed package of head.tgz ($R, after
# install_head or a pip of $R); PEERS_TIMEOUT / PEERS_BUDGET (330 / 300 s); PYTEST_LAST=1: peers first
# (for a call that may time out). gpu-next69.sh, gpu-next84.sh, gpu-next102.sh.
run_pytest() {
  echo "== pytest $(el)"
  (cd "$R" && timeout -k 5 200 python -m pytest tests/python -q -p no:cacheprovider > "$O/pytest.log" 2>&1)
  echo "pytest rc $? $(el)"; tail -2 "$O/pytest.log"
}
pytest_and_peers() {
  [ -d "$R" ] || return 1
  [ "${PYTEST_LAST:-0}" = 1 ] || run_pytest
  (cd /tmp && timeout -k 5 "${PEERS_TIMEOUT:-330}" python "$R/bench/peers.py" --rounds 3 --warmup 2 --reps 4 \
    --budget-s "${PEERS_BUDGET:-300}" ${PEERS_EXTRA:-} --json "$O/peers.json" --png "$O/peers.png" > "$O/peers.log" 2>&1)
  echo "peers rc $? $(el)"
  python3 "$R/scripts/peers_table.py" "$O/peers.json" > "$O/table.md" 2>&1; tail -34 "$O/table.md"
  [ "${PYTEST_LAST:-0}" = 1 ] && run_pytest
  return 0
}
