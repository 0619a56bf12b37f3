#!/usr/bin/env bash
# GPU machine (twenty-fifth session). Everything goes into $OUT/all.tgz.
#   PART=1 (.snap/head.tgz = a clean export of HEAD without docs/data): the package; then peers.py a
#          second time at the forward target's points only (hdim 128, full and causal, 4k / 8k /
#          16k; cuDNN, flex, dash auto / descending / shift; 3 rounds, 7 forward-only rounds): is the
#          forward-only phase's ratio (gpu-next50: 1.007 / 1.015 / 1.027 full) repeatable?
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next51
{
if [ "${PART:-1}" = 1 ]; then
  mkdir -p /tmp/h && tar xzf head.tgz -C /tmp/h && cd /tmp/h || exit 1
  echo "== pip $(el)"
  python -m pip install --no-build-isolation --no-deps . > "$O/pip.log" 2>&1; echo "pip rc $? $(el)"
  R=$PWD; cd /tmp || exit 1
  timeout -k 5 300 python "$R/bench/peers.py" --hdims 128 --masks full,causal --seqlens 4096,8192,16384 \
    --impls cudnn,flex,dash:descending,dash:shift,dash:auto --rounds 3 --warmup 2 --reps 4 --fwd-rounds 7 \
    --json "$O/peers.json" > "$O/peers.log" 2>&1; echo "peers rc $? $(el)"
  python3 - "$O/peers.json" <<'PY'
import json, sys, statistics
d = json.load(open(sys.argv[1]))
print("hdim 128: forward cuDNN / dash (forward-only phase, median; in the rounds), backward best det / cuDNN")
for x in d["results"]:
    q = x["ratios"]
    c, a = x["impls"]["cudnn"], x["impls"]["dash:auto"]
    print(f"  {x['mask']:6s} {x['seqlen']:6d} fwd phase {q['fwd_vs_cudnn_fwd']:.3f} (cudnn {c['fwd_phase_ms']:.3f} ms, dash {a['fwd_phase_ms']:.3f} ms; "
          f"min {min(c['fwd_phase_ms_all']) / min(a['fwd_phase_ms_all']):.3f})  in rounds {q['fwd_vs_cudnn_fwd_in_rounds']:.3f}   "
          f"bwd {q['best_det_schedule']} {q['best_det_vs_cudnn_bwd']:.3f}  auto/best {q['auto_vs_best']:.3f}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
