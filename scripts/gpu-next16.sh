#!/usr/bin/env bash
# GPU machine, one call (written in the fifteenth session for the next one; docs/perf.md v16 items
# 7 and 9). From prebuilt binaries (bins.tgz: bins/new/{dash-attn,dash_gpu_tests}; build here:
# cmake --build build && mkdir -p .snap/bins/new && cp build/dash-attn build/tests/dash_gpu_tests
# .snap/bins/new/ && tar czf .snap/bins.tgz -C .snap bins; run with carry [".snap"] and
# `cd .snap && bash scripts/gpu-next16.sh`). Everything goes into $OUT/all.tgz.
# 1. the backward GPU tests with the sanitizers (scripts/gpu-bwd-tests.sh), including the 80-row
#    drafts' BwdSm90Fp16Bm80 and BwdSm90D64Bm80;
# 2. fp16 A/B, hdim 128: the default (64-row tiles) against DASH_BWD_SM90_FP16_BM80=1 (80-row tiles
#    for atomic / shift), ROUNDS interleaved (scripts/gpu-binary-ab.sh with wrappers);
# 2b. hdim 64 A/B, bf16: the default against DASH_BWD_SM90_D64_BM80=1 (80-row tiles, two staging
#    buffers, every schedule at full masks from 1k), with the bits of each build compared across rounds;
# 3. ncu (scripts/profile-bwd.sh, SET=full) of descending and shift at hdim 128 full SEQLEN (8192):
#    64-row tiles, then 80-row tiles forced (DASH_BWD_SM90_BLOCK_M=80): shift's visit-order cost
#    (L2 hit rate, DRAM bytes, stall reasons) and the 80-row descending's staging-buffer wait.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-next16-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
export PATH="/usr/local/cuda/bin:$PATH"
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SM90_PRODUCER24 DASH_BWD_SM90_FP16_BM80
[ -d bins ] || tar xzf bins.tgz
wrap() {  # wrap NAME DTYPE ENV...: bins/NAME/dash-attn = bins/new/dash-attn at DTYPE with exactly these switches
  mkdir -p "bins/$1"
  printf '#!/bin/sh\nexec env -u DASH_BWD_SM90_FP16_BM80 -u DASH_BWD_SM90_D64_BM80 %s "%s" "$@" --dtype %s\n' "${*:3}" \
    "$PWD/bins/new/dash-attn" "$2" > "bins/$1/dash-attn"
  chmod +x "bins/$1/dash-attn"
}
wrap fp16 fp16; wrap fp16bm80 fp16 DASH_BWD_SM90_FP16_BM80=1
wrap d64 bf16; wrap d64bm80 bf16 DASH_BWD_SM90_D64_BM80=1
{
echo "== tests $(el)"
bash scripts/gpu-bwd-tests.sh "$O"
echo "== fp16 A/B $(el)"
mkdir -p "$O/fp16-ab"
BINS="fp16=bins/fp16/dash-attn fp16bm80=bins/fp16bm80/dash-attn" SUITE= ROUNDS=${ROUNDS:-2} HDIMS=128 \
  SCHEDULES=descending,shift,atomic OUT="$O/fp16-ab" bash scripts/gpu-binary-ab.sh | grep -E "geomean|full" | head -20
python3 - "$O/fp16-ab" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(f"{sys.argv[1]}/ab-r1-*.json")):
    rows = {(e["seqlen"], e["causal"], e["schedule"]): (e["block_m"], e["producer_regs"]) for e in json.load(open(f))}
    print(f.split("/")[-1], "tiles/regs at full 4096:", {k[2]: v for k, v in rows.items() if k[0] == 4096 and not k[1]})
PY
echo "== hdim 64 A/B $(el)"
mkdir -p "$O/d64-ab"
BINS="d64=bins/d64/dash-attn d64bm80=bins/d64bm80/dash-attn" SUITE= ROUNDS=${ROUNDS:-2} HDIMS=64 \
  SCHEDULES=descending,spt,shift,atomic OUT="$O/d64-ab" bash scripts/gpu-binary-ab.sh | grep -E "geomean|full" | head -30
for v in d64 d64bm80; do  # each build against itself over the rounds (the tiles differ between the builds)
  mkdir -p "$O/d64-ab/bits-$v" && cp "$O"/d64-ab/ab-r*-"$v"-hdim*.json "$O/d64-ab/bits-$v"/ 2>/dev/null
  echo "$v: $(python3 scripts/ab_bits.py "$O/d64-ab/bits-$v" 1 | tail -1)"
done
echo "== ncu $(el)"
mkdir -p "$O/ncu64" "$O/ncu80"
OUT="$O/ncu64" BUILD_DIR=bins/new SEQLEN=${SEQLEN:-8192} SCHEDULES="descending shift" bash scripts/profile-bwd.sh
DASH_BWD_SM90_BLOCK_M=80 OUT="$O/ncu80" BUILD_DIR=bins/new SEQLEN=${SEQLEN:-8192} SCHEDULES="descending shift" \
  bash scripts/profile-bwd.sh
for d in ncu64 ncu80; do
  for s in descending shift; do
    [ -f "$O/$d/bwd-$s-sass.csv" ] && python3 scripts/ncu_stalls.py "$O/$d/bwd-$s-sass.csv" --top 8 > "$O/$d/stalls-$s.txt" 2>&1
  done
done
rm -f "$O"/ncu*/*.ncu-rep.tmp
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
# the .ncu-rep files are large: keep the text pages and CSVs
tar czf "$DEST/all.tgz" --exclude='*.ncu-rep' -C "$O" .
