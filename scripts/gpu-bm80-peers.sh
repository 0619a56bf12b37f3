#!/usr/bin/env bash
# GPU machine, one call (thirteenth session): 64- against 80-row Q tiles of the hdim 128 full-mask
# backward inside the peers benchmark (PyTorch, same tensors as cuDNN), alternating processes
# A B A B (DASH_BWD_SM90_BLOCK_M=64 / =80), because the CLI A/B (bench) and the peers run
# disagreed at 16k (CLI: 80 rows 7% faster; peers: 1.5% slower than the last session's 64-row run).
# VARIANTS="name:ENV=V,ENV=V name:..." runs other environment variants the same way (default: the
# 64/80 pair; for the 24 / 240-register split, e.g. VARIANTS="base: p24:DASH_BWD_SM90_PRODUCER24=1
# bm80p24:DASH_BWD_SM90_PRODUCER24=1,DASH_BWD_SM90_BLOCK_M=80" MASKS=full,causal).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-bm80-peers-logs}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH" MAX_JOBS=$(nproc) CUBLAS_WORKSPACE_CONFIG=:4096:8 PYTHONUNBUFFERED=1
python -m pip install --no-build-isolation --no-deps -v . > "$OUT/pip.log" 2>&1; echo "pip rc $?"
VARIANTS=${VARIANTS:-bm64:DASH_BWD_SM90_BLOCK_M=64 bm80:DASH_BWD_SM90_BLOCK_M=80}
for r in 1 2; do
  for var in $VARIANTS; do
    name=${var%%:*} envs=${var#*:}
    env ${envs//,/ } timeout -k 5 150 python bench/peers.py --hdims 128 --masks ${MASKS:-full} --seqlens ${SEQLENS:-4096,8192,16384} \
      --impls cudnn,dash:descending,dash:ascending,dash:atomic --warmup 2 --reps 4 --rounds 3 \
      --json "$OUT/peers-r$r-$name.json" > "$OUT/peers-r$r-$name.log" 2>&1 || echo "peers r$r $name rc $?"
  done
done
python3 - "$OUT" <<'PY'
import glob, json, sys
out = sys.argv[1]
best = {}
for f in sorted(glob.glob(f"{out}/peers-r*-*.json")):
    var = f.split("/")[-1].split("-", 2)[2].rsplit(".", 1)[0]
    for r in json.load(open(f))["results"]:
        for name, v in r["impls"].items():
            if isinstance(v, dict) and "bwd_ms" in v:
                k = (r["seqlen"], r["mask"], name, var)
                best.setdefault(k, []).append(v["bwd_ms"])
for k in sorted(best):
    print(f"seqlen {k[0]:6} {k[1]:6} {k[2]:16} {k[3]}: bwd ms " + " ".join(f"{x:.3f}" for x in best[k]))
PY
