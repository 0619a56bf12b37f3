#!/usr/bin/env bash
# GPU machine (twenty-ninth session). Everything goes into $OUT/all.tgz. .snap/bins.txz: bins/new/{dash-attn,
# dash_gpu_tests} (HEAD: the dK / dV epilogue transposed across each quad, 16-byte stores) and
# bins/old/dash-attn (cf1534f: 4-byte stores, the kernels of f83b2b5).
#   PART=1: speed new / old (2 interleaved rounds, `dash-attn bench`, hdim 128 / 64, full / causal,
#          512-16k, descending / shift / spt / atomic) and grad_hash old == new per deterministic row;
#          the tests (BwdSm90DkvVec.*, the accuracy and two-buffer / split tests); memcheck and
#          synccheck on one launch per kernel family.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next75
{
if [ "${PART:-1}" = 1 ]; then
  echo "== A/B $(el)"
  for r in 1 2; do
    for v in old new; do
      for d in 128 64; do
        for c in 0 1; do
          timeout -k 5 90 bins/$v/dash-attn bench --hdim $d --causal $c --seqlen 512,1024,2048,4096,16384 \
            --schedules descending,shift,spt,atomic --json "$O/ab-$v-d$d-c$c-r$r.json" > /dev/null 2>&1 || echo "bench $v $d $c r$r rc $?"
        done
      done
    done
  done
  python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
t, h = {}, {}
for v in ("old", "new"):
    for d in (128, 64):
        for c in (0, 1):
            for r in (1, 2):
                try:
                    rows = json.load(open(f"{O}/ab-{v}-d{d}-c{c}-r{r}.json"))
                except Exception as e:
                    print(v, d, c, r, e); continue
                for row in rows:
                    k = (d, c, row["schedule"], row["seqlen"])
                    t.setdefault((v,) + k, []).append(row["bwd_ms"])
                    if row["schedule"] != "atomic":
                        h.setdefault(k, set()).add(row["grad_hash"])
seqs = sorted({k[4] for k in t})
for d in (128, 64):
    for c in (0, 1):
        for sc in ("descending", "shift", "spt", "atomic"):
            cells = []
            for s in seqs:
                a, b = t.get(("old", d, c, sc, s)), t.get(("new", d, c, sc, s))
                if a and b:
                    cells.append(f"{s}: {min(a) / min(b):.3f} ({min(b):.3f})")
            print(f"hdim {d} {'causal' if c else 'full'} {sc:10s} new / old speed (min of 2; new ms): " + "  ".join(cells))
bad = [k for k, s in h.items() if len(s) != 1]
print(f"grad_hash: {len(h) - len(bad)} of {len(h)} deterministic rows equal old / new and across rounds; differing {bad[:6]}")
PY
  echo "== tests $(el)"
  timeout -k 5 200 bins/new/dash_gpu_tests --gtest_filter='BwdSm90DkvVec.*:*BwdSm90Accuracy*:BwdSm90Dq2*:BwdSm90LastWaveSplit*' > "$O/t.log" 2>&1
  echo "tests rc $? $(grep -E '^\[  (PASSED|FAILED) ' "$O/t.log" | tr '\n' ' ') $(el)"
  grep -E "^\[  FAILED" "$O/t.log" | head
  echo "== sanitizers $(el)"
  for tool in memcheck synccheck; do
    for cfg in "128 0 1000" "128 1 1000" "64 0 700"; do
      set -- $cfg
      timeout -k 5 100 compute-sanitizer --tool $tool bins/new/dash-attn bench --hdim $1 --causal $2 --seqlen $3 \
        --batch 1 --heads 4 --kv-heads 2 --schedules descending,shift,atomic --reps 1 > "$O/san-$tool-$1-$2.log" 2>&1
      echo "$tool $cfg rc $? $(grep -E 'ERROR SUMMARY' "$O/san-$tool-$1-$2.log" | tr '\n' ' ')"
    done
  done
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
