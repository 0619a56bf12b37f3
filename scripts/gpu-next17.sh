#!/usr/bin/env bash
# GPU machine, one call (sixteenth session): the split dQ rank (shift / symmetric shift: the rank
# loop spread over the MMA warps, summed by the writer; docs/perf.md v17) against the build before
# it. From prebuilt binaries (bins.tgz: bins/new/{dash-attn,dash_gpu_tests}, bins/base/dash-attn;
# run with carry [".snap"] and `cd .snap && bash scripts/gpu-next17.sh`). Everything goes into
# $OUT/all.tgz.
# 1. the backward GPU tests of the new build with the sanitizers (scripts/gpu-bwd-tests.sh);
# 2. A/B base vs new, ROUNDS interleaved, hdim 128 and 64, descending (control), shift, symmetric
#    shift, full and causal; the bits of the deterministic rows compared across the builds (the
#    ranks are the same numbers, so the bits must be equal);
# 3. ncu (SET=full) of the new build's shift at hdim 128 full SEQLEN (8192): the dS barrier's stall.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-next17-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
export PATH="/usr/local/cuda/bin:$PATH"
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SM90_PRODUCER24 DASH_BWD_SM90_FP16_BM80 DASH_BWD_SM90_D64_BM80
[ -d bins ] || tar xzf bins.tgz
{
echo "== tests $(el)"
bash scripts/gpu-bwd-tests.sh "$O"
echo "== A/B $(el)"
mkdir -p "$O/ab"
BINS="base=bins/base/dash-attn new=bins/new/dash-attn" SUITE= ROUNDS=${ROUNDS:-2} HDIMS="128 64" \
  SCHEDULES=descending,shift,symmetric_shift OUT="$O/ab" bash scripts/gpu-binary-ab.sh | grep -vE "^ +(full|causal) +(512|1024) "
python3 scripts/ab_bits.py "$O/ab" 2 | tail -3
echo "== ncu $(el)"
mkdir -p "$O/ncu"
OUT="$O/ncu" BUILD_DIR=bins/new SEQLEN=${SEQLEN:-8192} SCHEDULES="shift" bash scripts/profile-bwd.sh
[ -f "$O/ncu/bwd-shift-sass.csv" ] && python3 scripts/ncu_stalls.py "$O/ncu/bwd-shift-sass.csv" --top 8 > "$O/ncu/stalls-shift.txt" 2>&1
cat "$O/ncu/stalls-shift.txt" 2>/dev/null | head -16
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude='*.ncu-rep' -C "$O" .
