#!/usr/bin/env bash
# GPU machine, one call: the 24 / 240-register producer split (DASH_BWD_SM90_PRODUCER24=1, kLean in
# attn_bwd_sm90.cu; written and compile-checked in the fourteenth session, which had no device
# time) against the default split, with 64- and 80-row Q tiles. ONE prebuilt build (bins.tgz:
# bins/new/{dash-attn,dash_gpu_tests}); the variants are environment switches of it:
#   base    = the default (232 / 40 registers, 64-row tiles)
#   p24     = DASH_BWD_SM90_PRODUCER24=1
#   bm80    = DASH_BWD_SM90_BLOCK_M=80 (80-row tiles at full masks, hdim 128, bf16; serialized order)
#   bm80p24 = both (the 80-row tile in the 64-row order: S^T/dP^T overlapped, dQ^T staged under dK)
# 1. every backward GPU test with BOTH switches exported (the lean kernels everywhere; the
#    Producer24 tests compare against the default split themselves), 4 shards; memcheck /
#    racecheck / synccheck of the Sanitize tests with both switches (SANITIZE=1, default);
# 2. A/B of the four variants interleaved (ROUNDS, HDIMS, SCHEDULES: scripts/gpu-binary-ab.sh);
# 3. bits: base == p24 and bm80 == bm80p24 on every deterministic row, every round.
# Build here first (CPU): cmake --build build && mkdir -p .snap/bins/new && cp build/dash-attn
# build/tests/dash_gpu_tests .snap/bins/new/ && tar czf .snap/bins.tgz -C .snap bins
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-p24-logs}; mkdir -p "$OUT"
[ -d bins ] || tar xzf bins.tgz
wrap() {  # wrap NAME ENV...: bins/NAME/dash-attn runs bins/new/dash-attn with exactly these switches
  mkdir -p "bins/$1"
  printf '#!/bin/sh\nexec env -u DASH_BWD_SM90_PRODUCER24 -u DASH_BWD_SM90_BLOCK_M %s "%s" "$@"\n' "${*:2}" \
    "$PWD/bins/new/dash-attn" > "bins/$1/dash-attn"
  chmod +x "bins/$1/dash-attn"
}
wrap base; wrap p24 DASH_BWD_SM90_PRODUCER24=1; wrap bm80 DASH_BWD_SM90_BLOCK_M=80
wrap bm80p24 DASH_BWD_SM90_PRODUCER24=1 DASH_BWD_SM90_BLOCK_M=80
BINS=${BINS:-base=bins/base/dash-attn p24=bins/p24/dash-attn bm80=bins/bm80/dash-attn bm80p24=bins/bm80p24/dash-attn}
# The switches for step 1 (the test binary and the sanitizers); every A/B wrapper sets its own.
export DASH_BWD_SM90_PRODUCER24=1 DASH_BWD_SM90_BLOCK_M=80
DASH_TEST_WATCHDOG_S=${DASH_TEST_WATCHDOG_S:-60} \
TEST_FILTER=${TEST_FILTER:-'*BwdSm90*:*Determinism*:*DualWriter*:BwdWorkspace*'} SANITIZE=${SANITIZE:-1} \
  BINS="$BINS" ROUNDS=${ROUNDS:-2} HDIMS=${HDIMS:-128 64} SCHEDULES=${SCHEDULES:-descending,shift,atomic} OUT="$OUT" \
  bash scripts/gpu-bwd-ab.sh
for pair in "base p24" "bm80 bm80p24"; do
  d="$OUT/bits-${pair/ /-}"; mkdir -p "$d"
  for v in $pair; do cp "$OUT"/ab-r*-"$v"-hdim*.json "$d"/ 2>/dev/null; done
  python3 scripts/ab_bits.py "$d" 2 | tail -3 | tee "$d.txt"
done
# Which kernel each variant ran (bench JSON: block_m, producer_regs from BwdLaunchInfo).
python3 - "$OUT" <<'PY' | tee "$OUT/variants.txt"
import glob, json, sys
seen = {}
for f in glob.glob(f"{sys.argv[1]}/ab-r*-*-hdim*.json"):
    v = f.split("/")[-1].split("-")[2]
    for e in json.load(open(f)):
        seen.setdefault((v, e["hdim"], "causal" if e["causal"] else "full"), set()).add((e.get("block_m"), e.get("producer_regs")))
for k in sorted(seen):
    print(f"{k[0]:8} hdim {k[1]:3} {k[2]:6}: (block_m, producer_regs) {sorted(seen[k])}")
PY
