#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from .snap, bins/ unpacked): the dQ buffer released at `.read` (DASH_BWD_EARLY_RELEASE=1,
#          an existing run-time switch: the writer arrives on dq_empty once the bulk reduce has READ
#          the staging buffer, and moves the semaphore after completion as before; same adds, same
#          bits). ncu at 8k (gpu-next41.sh) put 15% of the two-buffer shift's hot loop in the
#          dq_empty wait, ordered and unordered alike: the reduce's completion, not the chain.
#          (1) tall_ab: hdim 128 full, defaults / early release / early release + 80 rows with two
#              buffers and early dV everywhere (+ sanitizers of the last);
#          (2) defaults / early release at hdim 128 causal and hdim 64 full (every tile kernel).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next42
unset DASH_BWD_SM90_DQ2 DASH_BWD_SM90_DQ2_EARLY_DV DASH_BWD_EARLY_RELEASE
ab2() {  # ab2 HDIM CAUSAL: 2 interleaved rounds, defaults vs DASH_BWD_EARLY_RELEASE=1
  local d=$1 c=$2
  for r in 1 2; do
    for cfg in def er; do
      envs=""; [ $cfg = er ] && envs="DASH_BWD_EARLY_RELEASE=1"
      env $envs timeout -k 5 90 bins/new/dash-attn bench --hdim $d --causal $c --seqlen 1024,2048,4096,8192,16384 \
        --schedules descending,ascending,spt,shift,symmetric_shift,atomic --json "$O/ab2-$d-$c-$cfg-r$r.json" > "$O/ab2-$d-$c-$cfg-r$r.log" 2>&1 || echo "bench $d $c $cfg r$r rc $?"
    done
  done
  python3 - "$O" $d $c <<'PY'
import json, sys
O, d, c = sys.argv[1], sys.argv[2], sys.argv[3]
t = {}
for cfg in ("def", "er"):
    for r in (1, 2):
        for row in json.load(open(f"{O}/ab2-{d}-{c}-{cfg}-r{r}.json")):
            t.setdefault((cfg, row["schedule"], row["seqlen"]), []).append((row["bwd_ms"], row["block_m"], row.get("dq_stage_bufs"), row["bwd_tflops"], row["grad_hash"]))
print(f"hdim {d} causal {c}: TFLOP/s (min of 2 rounds) [block_m/bufs], early release / default time ratio")
for sc in ("descending", "ascending", "spt", "shift", "symmetric_shift", "atomic"):
    line = f"{sc:16s}"
    for s in sorted({k[2] for k in t}):
        a, b = min(t[("def", sc, s)]), min(t[("er", sc, s)])
        same = "" if sc == "atomic" or a[4] == b[4] else " BITS DIFFER"
        line += f"  {s}: {a[3]:5.1f}->{b[3]:5.1f} [{b[1]}/{b[2]}] {a[0] / b[0]:.3f}{same}"
    print(line)
PY
}
{
if [ "${PART:-1}" = 1 ]; then
  tall_ab "DASH_BWD_EARLY_RELEASE=1" "DASH_BWD_EARLY_RELEASE=1 DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1 DASH_BWD_SM90_DQ2_EARLY_DV=1"
  echo "== causal hdim 128 $(el)"; ab2 128 1
  echo "== full hdim 64 $(el)"; ab2 64 0
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
