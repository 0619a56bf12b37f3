#!/usr/bin/env bash
# GPU machine (twenty-sixth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap: bins/new = HEAD's default build with the ascending rule at hdim 128 full 32-63 KV
#          tiles; head.tgz = HEAD without docs/data): `dash-attn bench` of ascending, descending and
#          auto at hdim 128 full 2k / 4k / 8k (2 rounds: auto runs ascending at 4k only); then the
#          package and peers at hdim 128 full 2k / 4k / 8k (3 rounds), where descending took
#          1.002-1.051x ascending's time at 4k in five earlier runs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next59
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p "$O/auto"
  for r in 1 2; do
    timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 2048,4096,8192 --schedules ascending,descending,auto \
      --json "$O/auto/auto-sweep-r$r.json" > "$O/auto/auto-sweep-r$r.log" 2>&1 || echo "bench rc $?"
  done
  python3 scripts/auto_sweep.py "$O"/auto/*.json
  peers_from_head --hdims 128 --masks full --seqlens 2048,4096,8192 --rounds 3 --warmup 2 --reps 4 --budget-s 200
  python3 - "$O/peers.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for x in d["results"]:
    im, r = x["impls"], x["ratios"]
    g = lambda n: im.get(n, {}).get("bwd_ms") or float("nan")
    print(f"{x['seqlen']}: asc {g('dash:ascending'):.3f} desc {g('dash:descending'):.3f} auto {g('dash:auto'):.3f} "
          f"(ran {r.get('auto_ran')}) cudnn {g('cudnn'):.3f}  desc/asc {g('dash:descending') / g('dash:ascending'):.3f} "
          f"best/cudnn {r['best_det_vs_cudnn_bwd']:.3f} auto/best {r['auto_vs_best']:.3f}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
