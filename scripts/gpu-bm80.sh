#!/usr/bin/env bash
# GPU machine, one call (thirteenth session): the 80-row Q tile of the hdim 128 backward (full
# masks) against the 64-row kernel. Prebuilt binaries in bins.tgz: bins/base (the previous commit)
# and bins/new (this one); bm64 = the new binary with DASH_BWD_SM90_BLOCK_M=64 (the 64-row tiles
# of this build: same bits as base expected, and ~ the same speed).
# 1. GPU tests of `new` (TEST_FILTER, default: the backward suites and the sm90 primitives) with
#    the sanitizers (SANITIZE=1 default);
# 2. A/B base / new / bm64 interleaved (ROUNDS, HDIMS, SCHEDULES);
# 3. bits: base == bm64 on every deterministic row; new equal to itself over the rounds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-bm80-logs}; mkdir -p "$OUT"
[ -d bins ] || tar xzf bins.tgz
mkdir -p bins/bm64
printf '#!/bin/sh\nDASH_BWD_SM90_BLOCK_M=64 exec "%s" "$@"\n' "$PWD/bins/new/dash-attn" > bins/bm64/dash-attn
chmod +x bins/bm64/dash-attn
# DASH_TEST_WATCHDOG_S: a hung backward aborts its test process with the workspace state (the
# first call of this script hung: bfda258's task taker used the 64-row model in the 80-row kernel).
BINS=${BINS:-base=bins/base/dash-attn new=bins/new/dash-attn bm64=bins/bm64/dash-attn}
DASH_TEST_WATCHDOG_S=${DASH_TEST_WATCHDOG_S:-60} \
TEST_FILTER=${TEST_FILTER:-'*BwdSm90*:*Determinism*:*DualWriter*:Sm90Primitives*:BwdWorkspace*'} SANITIZE=${SANITIZE:-1} \
  BINS="$BINS" \
  ROUNDS=${ROUNDS:-2} HDIMS=${HDIMS:-128 64} SCHEDULES=${SCHEDULES:-descending,shift,atomic} OUT="$OUT" \
  bash scripts/gpu-bwd-ab.sh
pairs="new"; case "$BINS" in *bm64=*) pairs="base-bm64 new";; esac
for pair in $pairs; do
  pair=${pair/-/ }
  d="$OUT/bits-$(echo $pair | tr ' ' '-')"; mkdir -p "$d"
  for v in $pair; do cp "$OUT"/ab-r*-"$v"-hdim*.json "$d"/; done
  python3 scripts/ab_bits.py "$d" "$(echo $pair | wc -w)" | tail -3 | tee "$d.txt"
done
