#!/usr/bin/env bash
# GPU machine (twenty-ninth session). .snap/bins.txz as gpu-next75.sh (new = HEAD, old = cf1534f).
#   PART=1: hdim 128 full descending 8k / 16k new against old, 4 interleaved rounds (next75 had new / old
#          0.868 at 16k, the only row below 0.98): each round's times, then min and median ratios.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next76
{
if [ "${PART:-1}" = 1 ]; then
  for r in 1 2 3 4; do
    for v in $([ $((r % 2)) = 1 ] && echo "old new" || echo "new old"); do
      timeout -k 5 60 bins/$v/dash-attn bench --hdim 128 --causal 0 --seqlen 8192,16384 --schedules descending,shift \
        --json "$O/d16-$v-r$r.json" > /dev/null 2>&1 || echo "bench $v r$r rc $?"
    done
  done
  python3 - "$O" <<'PY'
import json, sys, statistics
O = sys.argv[1]
t = {}
for v in ("old", "new"):
    for r in (1, 2, 3, 4):
        for row in json.load(open(f"{O}/d16-{v}-r{r}.json")):
            t.setdefault((v, row["schedule"], row["seqlen"]), []).append(row["bwd_ms"])
for sc in ("descending", "shift"):
    for s in (8192, 16384):
        a, b = t[("old", sc, s)], t[("new", sc, s)]
        print(f"hdim 128 full {sc} {s}: old ms {a} new ms {b}; new / old speed min {min(a) / min(b):.3f} median {statistics.median(a) / statistics.median(b):.3f}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
