#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from a clean export): the package, then peers.py at hdim 128 full 2k / 4k only, 5 rounds:
#          cuDNN and the ordered schedules with `auto`. Question: should `auto` take the two-buffer
#          shift below its 8k rule (`dash-attn bench` had it 1.7% ahead of descending at 4k twice;
#          the last peers run had it 0.94 of ascending there)?
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next48
{
if [ "${PART:-1}" = 1 ]; then
  echo "== pip $(el)"
  python -m pip install --no-build-isolation --no-deps . > "$O/pip.log" 2>&1; echo "pip rc $? $(el)"
  R=$PWD; cd /tmp || exit 1
  timeout -k 5 110 python "$R/bench/peers.py" --hdims 128 --masks full --seqlens 2048,4096 \
    --impls cudnn,dash:ascending,dash:descending,dash:shift,dash:spt,dash:auto --rounds 5 --warmup 2 --reps 4 \
    --json "$O/peers.json" > "$O/peers.log" 2>&1; echo "peers rc $? $(el)"
  python3 - "$O/peers.json" <<'PY'
import json, sys, statistics
d = json.load(open(sys.argv[1]))
for x in d["results"]:
    im = x["impls"]
    print(f"hdim {x['hdim']} {x['mask']} {x['seqlen']}: bwd TFLOP/s (median), round medians ms; auto ran {x['ratios'].get('auto_ran')}")
    for n, v in im.items():
        if "bwd_ms" not in v: print("  ", n, v.get("error")); continue
        print(f"  {n:16s} {x['bwd_flops'] / v['bwd_ms'] * 1e-9:6.1f}  min {x['bwd_flops'] / min(v['bwd_ms_all']) * 1e-9:6.1f}  rounds {[round(r, 3) for r in v['bwd_ms_rounds']]}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
