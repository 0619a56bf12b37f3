#!/usr/bin/env bash
# GPU machine (for the thirty-first session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests).
#   PART=1: the whole GPU suite (6 shards, sanitizers) with DASH_BWD_POST_SMS=2 exported (the draft of
#           docs/perf.md v31 item 7: the main kernel leaves 2 SMs to the polling postprocess), then its
#           A/B: 3 interleaved rounds of `dash-attn bench`, k = 0 / 2, hdim 128 full and causal and hdim 64
#           full, descending / shift / spt, 1k-16k; speed k=2 / k=0 (min of 3).
#   Then (an H200 wanted): `PART=2 bash scripts/gpu-next69.sh` (pip, pytest, peers).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next83
{
if [ "${PART:-1}" = 1 ]; then
  DASH_BWD_POST_SMS=2 suite_and_bench '(PostSms|GroupTake|EnvSwitches|BwdSm90Auto)'
  for r in 1 2 3; do
    for k in 0 2; do
      for cfg in "128 0" "128 1" "64 0"; do
        set -- $cfg
        DASH_BWD_POST_SMS=$k timeout -k 5 60 bins/new/dash-attn bench --hdim $1 --causal $2 \
          --seqlen 1024,2048,4096,8192,16384 --schedules descending,shift,spt \
          --json "$O/ps-k$k-d$1-c$2-r$r.json" > /dev/null 2>&1 || echo "bench k$k $cfg r$r rc $?"
      done
    done
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
L = (1024, 2048, 4096, 8192, 16384)
for d, c in ((128, 0), (128, 1), (64, 0)):
    t = {}
    for k in (0, 2):
        for r in (1, 2, 3):
            for row in json.load(open(f"{O}/ps-k{k}-d{d}-c{c}-r{r}.json")):
                t.setdefault((k, row["schedule"], row["seqlen"]), []).append(row["bwd_ms"])
    for sc in ("descending", "shift", "spt"):
        print(f"hdim {d} {'causal' if c else 'full'} {sc:10s} k=2 / k=0 speed (min of 3; k=2 ms): " + "  ".join(
            f"{s}: {min(t[(0, sc, s)]) / min(t[(2, sc, s)]):.3f} ({min(t[(2, sc, s)]):.3f})" for s in L))
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
