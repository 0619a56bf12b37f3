#!/usr/bin/env bash
# GPU machine, one call (sixteenth session): the split dQ rank as kernel variants (kSplit; the
# other kernels byte-identical to the build before), the whole GPU suite and the A/B that sets its
# threshold. From prebuilt binaries (bins.tgz: bins/new/{dash-attn,dash_gpu_tests},
# bins/base/dash-attn; carry [".snap"], `cd .snap && bash scripts/gpu-next17b.sh`). Everything
# goes into $OUT/all.tgz.
# 1. the whole GPU suite of the new build in 4 shards, the sanitizers alongside;
# 2. A/B, ROUNDS interleaved, hdim 128 and 64, shift and symmetric shift, full and causal:
#    base (before the split), new (split from 64 KV tiles), split (DASH_BWD_SPLIT_RANK=1: at every
#    length); the bits of every deterministic row must be equal over the three.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DEST=${OUT:-$PWD/gpu-next17b-logs}; O=$(mktemp -d); mkdir -p "$DEST"
T0=$(date +%s); el() { echo "($(( $(date +%s) - T0 )) s)"; }
export PATH="/usr/local/cuda/bin:$PATH"
unset DASH_BWD_SM90_BLOCK_M DASH_BWD_SM90_PRODUCER24 DASH_BWD_SM90_FP16_BM80 DASH_BWD_SM90_D64_BM80 DASH_BWD_SPLIT_RANK
[ -d bins ] || tar xzf bins.tgz
mkdir -p bins/split
printf '#!/bin/sh\nexec env DASH_BWD_SPLIT_RANK=1 "%s" "$@"\n' "$PWD/bins/new/dash-attn" > bins/split/dash-attn
chmod +x bins/split/dash-attn
{
echo "== tests $(el)"
TEST_FILTER='*' LIMIT_S=${LIMIT_S:-330} bash scripts/gpu-bwd-tests.sh "$O"
echo "== A/B $(el)"
mkdir -p "$O/ab"
BINS="base=bins/base/dash-attn new=bins/new/dash-attn split=bins/split/dash-attn" SUITE= ROUNDS=${ROUNDS:-2} \
  HDIMS="128 64" SCHEDULES=shift,symmetric_shift OUT="$O/ab" bash scripts/gpu-binary-ab.sh
python3 scripts/ab_bits.py "$O/ab" 3 | tail -3
python3 - "$O/ab" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(f"{sys.argv[1]}/ab-r1-*-hdim128.json")):
    print(f.split("/")[-1], "split_rank at full:", {(e["seqlen"], e["schedule"]): e.get("split_rank") for e in json.load(open(f)) if not e["causal"] and e["seqlen"] in (4096, 8192)})
PY
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
