#!/usr/bin/env bash
# Reproducibility check for examples/train_llama.py (issue 6, item 3).
#
# STATUS: ran on 2 H200s at d1ffa51 with --steps 100 (docs/perf.md, "Reproducible training").
#
# Runs, each into its own folder under --out:
#   1 GPU : dash x2 (must match bit for bit), sdpa_cudnn x2 (non-deterministic: expected to
#           differ), sdpa_detmode x1 (tokens/s reference)
#   2 GPUs: DDP dash x2 and FSDP dash x2 (each pair must match), DDP sdpa_cudnn x1 and DDP
#           sdpa_detmode x1 (tokens/s);
#           skipped with a message when fewer than 2 GPUs are visible
# compares every pair's per-step losses/grad norms (losses.jsonl, byte for byte) and final
# weight SHA-256 (summary.json), prints tokens/s per configuration with the dash/cuDNN and
# dash/detmode ratios, writes results.json and losses.png, and exits 1 if a deterministic pair
# differs or a run fails (2 on bad usage).
#
# The default (base preset, 75.9M params, head_dim 128, seqlen 2048, 8 seqs/GPU, 200 steps) is
# meant to take a few minutes on H200s; --preset small (17.2M) is quicker.
#
#   examples/check_reproducible.sh
#   examples/check_reproducible.sh --steps 500 --out runs/repro-500
#   examples/check_reproducible.sh --one-gpu --skip-detmode --steps 50      # quickest
#   examples/check_reproducible.sh --device cpu --preset tiny --attn-det sdpa --attn-nondet sdpa \
#       --steps 6 --seqlen 128 --batch 2 --python /tmp/venv/bin/python --out /tmp/repro   # CPU plumbing test
#
# Options: --steps N (200) --preset tiny|small|base (base) --seqlen N (2048) --batch N (8)
#   --seed N (1234) --schedule NAME (auto) --out DIR (runs/repro) --python PY (python3)
#   --one-gpu (skip the 2-GPU runs) --skip-fsdp --skip-nondet --skip-detmode
#   --device cuda|cpu (cpu: gloo, only for testing this script; needs --attn-det/--attn-nondet sdpa)
#   --attn-det NAME (dash; the attention of the runs that must match)
#   --attn-nondet NAME (sdpa_cudnn; the non-deterministic baseline)
#   --extra "ARGS" (passed to every train_llama.py run)
#   --budget-s N (0 = none): start no new run after N seconds; the runs so far are still
#     compared and reported, and the exit status is 3 (incomplete) unless a pair differed
#   --skip-step-ab: skip the interleaved step-time comparisons, 1 GPU and 2 GPUs (examples/step_time_ab.py:
#     the deterministic, non-deterministic and deterministic-mode attentions trained in ONE
#     process in alternating blocks, CUDA-event step times; its ratios do not depend on the
#     scatter between processes that the separate runs' tokens/s show)
set -u

STEPS=200 PRESET=base SEQLEN=2048 BATCH=8 SEED=1234 SCHEDULE=auto OUT=runs/repro PY=python3
ONE_GPU=0 SKIP_FSDP=0 SKIP_NONDET=0 SKIP_DETMODE=0 SKIP_STEP_AB=0 DEVICE=cuda ATTN_DET=dash ATTN_NONDET=sdpa_cudnn EXTRA="" BUDGET_S=0
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) STEPS=$2; shift 2 ;;
    --preset) PRESET=$2; shift 2 ;;
    --seqlen) SEQLEN=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --schedule) SCHEDULE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --one-gpu) ONE_GPU=1; shift ;;
    --skip-fsdp) SKIP_FSDP=1; shift ;;
    --skip-nondet) SKIP_NONDET=1; shift ;;
    --skip-detmode) SKIP_DETMODE=1; shift ;;
    --skip-step-ab) SKIP_STEP_AB=1; shift ;;
    --device) DEVICE=$2; shift 2 ;;
    --attn-det) ATTN_DET=$2; shift 2 ;;
    --attn-nondet) ATTN_NONDET=$2; shift 2 ;;
    --extra) EXTRA=$2; shift 2 ;;
    --budget-s) BUDGET_S=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done

HERE=$(cd "$(dirname "$0")" && pwd)
TRAIN="$HERE/train_llama.py"
mkdir -p "$OUT" || exit 2

# Determinism environment (train_llama.py sets the same defaults; exported here so that torchrun's
# children and anything started before Python see them). NVLink multicast must stay off on the
# workplace machines.
export CUBLAS_WORKSPACE_CONFIG=${CUBLAS_WORKSPACE_CONFIG:-:4096:8}
export NCCL_ALGO=${NCCL_ALGO:-Ring}
export NCCL_PROTO=${NCCL_PROTO:-Simple}
export NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export NVSHMEM_DISABLE_NVLS=1

if [ "$DEVICE" = cuda ]; then
  NGPU=$("$PY" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
  if [ "${NGPU:-0}" -lt 1 ]; then echo "no CUDA GPU visible (torch.cuda.device_count() = ${NGPU:-?})" >&2; exit 1; fi
  "$PY" -c 'import torch; print("[check]", torch.cuda.get_device_name(0), "x", torch.cuda.device_count(), "| torch", torch.__version__, "| cuda", torch.version.cuda, "| cudnn", torch.backends.cudnn.version(), "| nccl", ".".join(map(str, torch.cuda.nccl.version())))'
else
  NGPU=2  # gloo processes on the CPU
fi
echo "[check] preset=$PRESET steps=$STEPS seqlen=$SEQLEN batch/gpu=$BATCH seed=$SEED schedule=$SCHEDULE out=$OUT"
echo "[check] env CUBLAS_WORKSPACE_CONFIG=$CUBLAS_WORKSPACE_CONFIG NCCL_ALGO=$NCCL_ALGO NCCL_PROTO=$NCCL_PROTO NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"

COMMON=(--preset "$PRESET" --steps "$STEPS" --seqlen "$SEQLEN" --batch "$BATCH" --seed "$SEED"
        --schedule "$SCHEDULE" --device "$DEVICE" --no-progress --no-checkpoint)
# shellcheck disable=SC2206
EXTRA_ARR=($EXTRA)
FAILED=0
SKIPPED=()   # runs not started: the time budget was spent
T_START=$(date +%s)
RUNS=()      # names of runs that finished
PAIRS=()     # "a b must|may" comparisons

run() {  # run NAME NPROC DIST ATTN
  local name=$1 nproc=$2 distmode=$3 attn=$4 d="$OUT/$1" rc t0 t1
  if [ "$BUDGET_S" -gt 0 ] && [ $(( $(date +%s) - T_START )) -ge "$BUDGET_S" ]; then
    echo "[check] skipped $name: the --budget-s $BUDGET_S seconds are spent"
    SKIPPED+=("$name")
    return 1
  fi
  mkdir -p "$d"
  echo "[check] run $name: $attn, $distmode, $nproc process(es) ..."
  t0=$(date +%s)
  if [ "$nproc" -gt 1 ]; then
    "$PY" -m torch.distributed.run --standalone --nproc_per_node "$nproc" "$TRAIN" "${COMMON[@]}" \
      --dist "$distmode" --attn "$attn" --out "$d" "${EXTRA_ARR[@]}" >"$d/log.txt" 2>&1
  else
    "$PY" "$TRAIN" "${COMMON[@]}" --dist "$distmode" --attn "$attn" --out "$d" "${EXTRA_ARR[@]}" >"$d/log.txt" 2>&1
  fi
  rc=$?
  t1=$(date +%s)
  if [ $rc -ne 0 ] || [ ! -s "$d/summary.json" ]; then
    echo "[check] FAILED $name (rc=$rc, $((t1 - t0))s); last lines of $d/log.txt:"
    tail -n 25 "$d/log.txt" | sed 's/^/    /'
    FAILED=1
    return 1
  fi
  echo "[check]   done in $((t1 - t0))s: $(grep -E '^(tokens_per_s|weights_sha256)' "$d/log.txt" | tr '\n' ' ')"
  RUNS+=("$name")
}

# ---- 1 GPU ----
run 1gpu_${ATTN_DET}_a 1 none "$ATTN_DET" && run 1gpu_${ATTN_DET}_b 1 none "$ATTN_DET" && PAIRS+=("1gpu_${ATTN_DET}_a 1gpu_${ATTN_DET}_b must")
if [ $SKIP_NONDET -eq 0 ]; then
  run 1gpu_${ATTN_NONDET}_a 1 none "$ATTN_NONDET" && run 1gpu_${ATTN_NONDET}_b 1 none "$ATTN_NONDET" && PAIRS+=("1gpu_${ATTN_NONDET}_a 1gpu_${ATTN_NONDET}_b may")
fi
[ $SKIP_DETMODE -eq 0 ] && run 1gpu_sdpa_detmode 1 none sdpa_detmode

# ---- step time in one process (interleaved blocks): 1 GPU here, 2 GPUs (DDP) below ----
step_ab() {  # step_ab NAME NPROC: examples/step_time_ab.py into $OUT/NAME.{json,log}
  local name=$1 nproc=$2
  if [ "$BUDGET_S" -gt 0 ] && [ $(( $(date +%s) - T_START )) -ge "$BUDGET_S" ]; then
    echo "[check] skipped $name: the --budget-s $BUDGET_S seconds are spent"; SKIPPED+=("$name"); return
  fi
  local attns=$ATTN_DET
  [ $SKIP_NONDET -eq 0 ] && attns=$attns,$ATTN_NONDET
  [ $SKIP_DETMODE -eq 0 ] && [ "$ATTN_DET" != sdpa_detmode ] && attns=$attns,sdpa_detmode
  attns=$(echo "$attns" | tr ',' '\n' | awk '!seen[$0]++' | paste -sd, -)
  echo "[check] $name: $attns in one process per GPU ($nproc), interleaved ..."
  local launch=("$PY")
  [ "$nproc" -gt 1 ] && launch=("$PY" -m torch.distributed.run --standalone --nproc_per_node "$nproc")
  if "${launch[@]}" "$HERE/step_time_ab.py" --attns "$attns" --preset "$PRESET" --seqlen "$SEQLEN" --batch "$BATCH" \
       --seed "$SEED" --device "$DEVICE" --json "$OUT/$name.json" > "$OUT/$name.log" 2>&1; then
    grep -E "^  [a-z_]+ +median" "$OUT/$name.log" | sed 's/^/[check]   /'
  else
    echo "[check] $name FAILED (not a determinism failure); last lines of $OUT/$name.log:"
    tail -n 15 "$OUT/$name.log" | sed 's/^/    /'
  fi
}
[ $SKIP_STEP_AB -eq 0 ] && step_ab step_ab 1

# ---- 2 GPUs ----
if [ $ONE_GPU -eq 1 ]; then
  echo "[check] 2-GPU runs skipped (--one-gpu)"
elif [ "$NGPU" -lt 2 ]; then
  echo "[check] 2-GPU runs skipped: only $NGPU GPU visible"
else
  run 2gpu_ddp_${ATTN_DET}_a 2 ddp "$ATTN_DET" && run 2gpu_ddp_${ATTN_DET}_b 2 ddp "$ATTN_DET" && PAIRS+=("2gpu_ddp_${ATTN_DET}_a 2gpu_ddp_${ATTN_DET}_b must")
  if [ $SKIP_FSDP -eq 0 ]; then
    run 2gpu_fsdp_${ATTN_DET}_a 2 fsdp "$ATTN_DET" && run 2gpu_fsdp_${ATTN_DET}_b 2 fsdp "$ATTN_DET" && PAIRS+=("2gpu_fsdp_${ATTN_DET}_a 2gpu_fsdp_${ATTN_DET}_b must")
  fi
  [ $SKIP_NONDET -eq 0 ] && run 2gpu_ddp_${ATTN_NONDET} 2 ddp "$ATTN_NONDET"
  [ $SKIP_DETMODE -eq 0 ] && run 2gpu_ddp_sdpa_detmode 2 ddp sdpa_detmode
  [ $SKIP_STEP_AB -eq 0 ] && step_ab step_ab_2gpu 2
fi

# ---- compare, report ----
"$PY" - "$OUT" "$ATTN_DET" "$ATTN_NONDET" "${#RUNS[@]}" "${RUNS[@]}" "${PAIRS[@]}" <<'EOF'
import json, os, sys
out, det, nondet = sys.argv[1], sys.argv[2], sys.argv[3]
n = int(sys.argv[4]); runs = sys.argv[5:5 + n]; pairs = [p.split() for p in sys.argv[5 + n:]]

def load(name):
    d = os.path.join(out, name)
    rows = [json.loads(l) for l in open(os.path.join(d, "losses.jsonl"))]
    s = json.load(open(os.path.join(d, "summary.json")))
    return rows, s, open(os.path.join(d, "losses.jsonl"), "rb").read()

runs = list(dict.fromkeys(runs))
data = {r: load(r) for r in runs}
bad = 0
res = {"runs": {}, "pairs": []}
print("\n[check] pairs")
for a, b, kind in pairs:
    (ra, sa, ba), (rb, sb, bb) = data[a], data[b]
    same_log = ba == bb
    same_w = sa["weights_sha256"] == sb["weights_sha256"]
    first = next((x["step"] for x, y in zip(ra, rb) if (x["loss"], x["grad_norm"]) != (y["loss"], y["grad_norm"])), None)
    maxd = max((abs(x["loss"] - y["loss"]) for x, y in zip(ra, rb)), default=0.0)
    ok = same_log and same_w and len(ra) == len(rb)
    if kind == "must":
        verdict = "IDENTICAL" if ok else "DIFFER  <-- FAIL"
        bad += not ok
    else:
        verdict = "differ (expected: non-deterministic)" if not ok else "identical (non-deterministic mode happened to match)"
    print(f"  {a} vs {b}: {verdict}; losses {'same' if same_log else f'first differ at step {first}, max |dloss| {maxd:.3g}'};"
          f" weights {sa['weights_sha256'][:16]} {'==' if same_w else '!='} {sb['weights_sha256'][:16]}")
    res["pairs"].append(dict(a=a, b=b, must_match=kind == "must", identical=ok, losses_identical=same_log,
                             weights_identical=same_w, first_diff_step=first, max_abs_loss_diff=maxd))

print("\n[check] throughput (tokens/s over all GPUs, after the timing warm-up; 'median': from the median"
      " step time, which one slow step does not move)")
print(f"  {'run':28s} {'attn':13s} {'gpus':>4s} {'tokens/s':>12s} {'median':>12s} {'per GPU':>11s} {'final loss':>11s}  weights")
for r in runs:
    s = data[r][1]
    res["runs"][r] = {k: s.get(k) for k in ("attn", "world_size", "tokens_per_s", "tokens_per_s_median",
                                            "tokens_per_s_per_gpu", "step_ms_median", "step_ms_min", "step_ms_max",
                                            "final_loss", "weights_sha256", "peak_mem_gib", "sdpa_gqa", "dash_bwd_info")}
    med = s.get("tokens_per_s_median") or float("nan")
    print(f"  {r:28s} {s['attn']:13s} {s['world_size']:4d} {s['tokens_per_s']:12.0f} {med:12.0f}"
          f" {s['tokens_per_s_per_gpu']:11.0f} {s['final_loss']:11.5f}  {s['weights_sha256'][:16]}")

def tps(name, key="tokens_per_s"):
    return data[name][1].get(key) if name in data else None

ratios, ratios_median = {}, {}
for tag, a, b in ((f"1gpu {det}/{nondet}", f"1gpu_{det}_a", f"1gpu_{nondet}_a"),
                  (f"1gpu {det}/sdpa_detmode", f"1gpu_{det}_a", "1gpu_sdpa_detmode"),
                  (f"2gpu ddp {det}/{nondet}", f"2gpu_ddp_{det}_a", f"2gpu_ddp_{nondet}"),
                  (f"2gpu ddp {det}/sdpa_detmode", f"2gpu_ddp_{det}_a", "2gpu_ddp_sdpa_detmode")):
    if tps(a) and tps(b):
        ratios[tag] = tps(a) / tps(b)
        line = f"  ratio {tag}: {ratios[tag]:.3f}"
        ma, mb = tps(a, "tokens_per_s_median"), tps(b, "tokens_per_s_median")
        if ma and mb:
            ratios_median[tag] = ma / mb
            line += f" (median steps: {ratios_median[tag]:.3f})"
        print(line)
res["ratios"] = ratios
res["ratios_median"] = ratios_median
for key, label in (("step_ab", "1 GPU"), ("step_ab_2gpu", "2 GPUs, DDP")):
    ab_path = os.path.join(out, key + ".json")
    if not os.path.exists(ab_path):
        continue
    # one process per GPU, interleaved: speed = the other's median step time / this one's
    ab = json.load(open(ab_path))
    r = ab["results"]
    res[key] = {"attns": ab["attns"], "median_ms": {k: v["median_ms"] for k, v in r.items()}}
    first = ab["attns"][0]
    for other in ab["attns"][1:]:
        speed = r[other]["median_ms"] / r[first]["median_ms"]
        res[key][f"{first}/{other} speed"] = speed
        print(f"  {label}, interleaved in one process: {first} / {other} speed {speed:.3f} (median step "
              f"{r[first]['median_ms']:.2f} vs {r[other]['median_ms']:.2f} ms)")
res["deterministic_pairs_ok"] = bad == 0
json.dump(res, open(os.path.join(out, "results.json"), "w"), indent=1)
sys.exit(1 if bad else 0)
EOF
CMP=$?
[ $CMP -ne 0 ] && FAILED=1

# ---- plot ----
PLOT_ARGS=()
for r in 1gpu_${ATTN_DET}_a 1gpu_${ATTN_DET}_b 1gpu_${ATTN_NONDET}_a 1gpu_${ATTN_NONDET}_b; do
  [ -s "$OUT/$r/losses.jsonl" ] && PLOT_ARGS+=(--run "$r=$OUT/$r/losses.jsonl")
done
if [ ${#PLOT_ARGS[@]} -gt 0 ]; then
  "$PY" "$HERE/plot_losses.py" "${PLOT_ARGS[@]}" --out "$OUT/losses.png" || echo "[check] plot failed (matplotlib missing?)"
fi

if [ $FAILED -ne 0 ]; then
  echo "[check] FAIL: a deterministic pair differs or a run failed (details above; logs in $OUT/*/log.txt)"
  exit 1
fi
if [ ${#SKIPPED[@]} -gt 0 ]; then
  echo "[check] INCOMPLETE: ${#SKIPPED[@]} run(s) skipped for the time budget (${SKIPPED[*]}); the pairs that ran are identical"
  exit 3
fi
echo "[check] OK: every deterministic pair is bit-identical (results in $OUT/results.json, plot $OUT/losses.png)"
