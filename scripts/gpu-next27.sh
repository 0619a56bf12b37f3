#!/usr/bin/env bash
# GPU machine (twentieth session): the 96-row tiles at head_dim 64 as the default. Prebuilt binaries
# as in gpu-next26.sh (a .snap with scripts/ and bins.tgz). Everything goes into $OUT/all.tgz.
#   PART=1: 2 interleaved rounds of `dash-attn bench` at hdim 64 full and causal 1k-16k, the default
#           (96 rows) against DASH_BWD_SM90_D64_BM=80 and =112, for atomic / shift / spt / descending (the 96-row
#           tasks of descending now interleave heads: ScheduleModel::default_head_block), ascending
#           forced to 64 / 80 / 96 / 112 rows at full masks (is its 64-row default still its best?), then the
#           whole GPU suite in 4 shards with the sanitizers, then `dash-attn bench` of every schedule;
#   PART=2: pip install + pytest, then the peers benchmark (all 24 points) for the README table.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next27
{
if [ "${PART:-1}" = 1 ]; then
  echo "== 96 / 80 rows at hdim 64 $(el)"
  d64_height_ab "80 96 112" atomic,shift,spt,descending
  echo "ascending at hdim 64 full, forced tile heights (ms, min of 2: 64 = its default / 80 / 96 / 112)"
  for r in 1 2; do
    for f in 64 80 96 112; do
      DASH_BWD_SM90_BLOCK_M=$f timeout -k 5 60 bins/new/dash-attn bench --hdim 64 --causal 0 \
        --seqlen 1024,2048,4096,8192,16384 --schedules ascending --json "$O/asc-$f-r$r.json" > /dev/null 2>&1 || echo "asc $f rc $?"
    done
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
for f in (64, 80, 96, 112):
    t = {}
    for r in (1, 2):
        for row in json.load(open(f"{O}/asc-{f}-r{r}.json")):
            t.setdefault(row["seqlen"], []).append((row["bwd_ms"], row["block_m"]))
    print(f"  {f:3d}: " + "  ".join(f"{s}: {min(v)[0]:.3f} ({min(v)[1]})" for s, v in sorted(t.items())))
PY
  echo "== tests $(el)"
  TEST_FILTER='*' LIMIT_S=${LIMIT_S:-240} bash scripts/gpu-bwd-tests.sh "$O"
  echo "== bench $(el)"
  bench_every_schedule
  python3 scripts/bench_rows.py "$O"/bench-hdim*.json | grep -E " auto "
else
  PIP_INSTALL=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-300} bash scripts/gpu-pytest-peers.sh "$O"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
