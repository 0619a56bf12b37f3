#!/usr/bin/env bash
# GPU machine (twenty-ninth session). Everything goes into $OUT/all.tgz. .snap/bins.txz: bins/{new,e0,e8}/dash-attn
# (stripped): new = HEAD (the backward at head_dim 128 takes every 4th softmax exp2 on the FMA pipe),
# e0 / e8 = HEAD built with -DDASH_BWD_EXP2_FMA_EVERY_HD128=0 (MUFU only) / 8.
#   PART=1: is the FMA-pipe share still right on a power-limited GPU? 3 interleaved rounds of
#          `dash-attn bench` at hdim 128 full and causal 1k-16k (descending, shift, spt, atomic) per
#          binary, then speed / new per variant (min of 3) and each variant's grad_hash across rounds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next73
{
if [ "${PART:-1}" = 1 ]; then
  for r in 1 2 3; do
    for v in new e0 e8; do
      for c in 0 1; do
        timeout -k 5 90 bins/$v/dash-attn bench --hdim 128 --causal $c --seqlen 1024,2048,4096,8192,16384 \
          --schedules descending,shift,spt,atomic --json "$O/fma-$v-c$c-r$r.json" > /dev/null 2>&1 || echo "bench $v $c r$r rc $?"
      done
    done
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t, h = {}, {}
for v in ("new", "e0", "e8"):
    for c in (0, 1):
        for r in (1, 2, 3):
            for row in json.load(open(f"{O}/fma-{v}-c{c}-r{r}.json")):
                k = (v, c, row["schedule"], row["seqlen"])
                t.setdefault(k, []).append(row["bwd_ms"])
                h.setdefault(k, set()).add(row["grad_hash"])
seqs = sorted({k[3] for k in t})
for c in (0, 1):
    for sc in ("descending", "shift", "spt", "atomic"):
        for v in ("e0", "e8"):
            print(f"hdim 128 {'causal' if c else 'full'} {sc:10s} {v} / new speed (min of 3; new ms): " + "  ".join(
                f"{s}: {min(t[('new', c, sc, s)]) / min(t[(v, c, sc, s)]):.3f} ({min(t[('new', c, sc, s)]):.3f})" for s in seqs))
unstable = [k for k, s in h.items() if len(s) != 1 and k[2] != "atomic"]
print(f"grad_hash stable across rounds per binary: {len([k for k in h if k[2] != 'atomic']) - len(unstable)} of {len([k for k in h if k[2] != 'atomic'])}; unstable {unstable[:4]}")
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
