#!/usr/bin/env bash
# GPU machine (twenty-eighth session). Everything goes into $OUT/all.tgz.
#   .snap: bins/old = ea9232a, bins/new = HEAD.
#   PART=1: (a) tests: the env snapshot (EnvSwitches), API validation, auto, the two-buffer kernels
#          (BwdSm90Dq2) and the causal two-buffer draft (BwdSm90D128CausalDq2, DASH_TEST_SM90_DRAFT=1);
#          (b) the host path: old / new (DASH_BWD_AUTO_EARLY=0 and =1) at the few-task shapes and
#          hdim 128 full 1k, shift and auto, 3 interleaved rounds (bwd_ms; host_us from new);
#          (c) the causal hdim 128 two-buffer draft (bf16, early dV): def (64 rows) / c80 (one buffer) /
#          dq2, 2 interleaved rounds, 1k-16k, descending, ascending, spt, atomic.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next67
{
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  timeout -k 5 120 bins/new/dash_gpu_tests --gtest_filter='EnvSwitches.*:ApiValidation.*:*BwdSm90Auto*:BwdSm90Dq2.*' > "$O/tests.log" 2>&1
  echo "tests rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests.log" | head -8
  DASH_TEST_SM90_DRAFT=1 timeout -k 5 150 bins/new/dash_gpu_tests --gtest_filter='BwdSm90D128CausalDq2.*' > "$O/tests-causal-dq2.log" 2>&1
  echo "causal dq2 test rc $?"; grep -E "^\[  (FAILED|  PASSED)|Failure|tests from .* ran" "$O/tests-causal-dq2.log" | head -8
  echo "== host path $(el)"
  mkdir -p "$O/host"
  for r in 1 2 3; do
    for cfg in old new0 new1; do
      case $cfg in old) b=old e=0 ;; new0) b=new e=0 ;; new1) b=new e=1 ;; esac
      for sh in "128 1 8 8 1024" "128 1 4 4 2048" "64 1 8 8 1024" "64 2 2 2 2048" "128 16 16 16 1024"; do
        set -- $sh
        DASH_BWD_AUTO_EARLY=$e timeout -k 5 40 bins/$b/dash-attn bench --hdim $1 --causal 0 --seqlen $5 --batch $2 --heads $3 --kv-heads $4 \
          --schedules shift,auto --reps 50 --json "$O/host/$cfg-d$1-b$2-h$3-$4-s$5-r$r.json" > /dev/null 2>&1 || echo "host $cfg $sh rc $?"
      done
    done
  done
  python3 - "$O/host" <<'PY'
import glob, json, sys, collections
t = collections.defaultdict(list)
for f in glob.glob(sys.argv[1] + "/*.json"):
    cfg, shape = f.rsplit("/", 1)[1].split("-", 1)
    shape = shape.rsplit("-r", 1)[0]
    for row in json.load(open(f)):
        t[(shape, cfg, row["schedule"])].append((row["bwd_ms"], row.get("host_us", float("nan")), row["ran"], row["grad_hash"]))
print("shape: min bwd_ms of 3 rounds [median host_us] per config and row; new / old speed")
for shape in sorted({k[0] for k in t}):
    cells = []
    for cfg in ("old", "new0", "new1"):
        for sc in ("shift", "auto"):
            v = t.get((shape, cfg, sc))
            if not v: continue
            hs = sorted(x[1] for x in v)
            cells.append(f"{cfg}:{sc}({v[0][2]}) {min(x[0] for x in v):.4f} [{hs[len(hs)//2]:.1f}]")
    print(shape, " | ".join(cells))
    for sc in ("shift", "auto"):
        o = min(x[0] for x in t[(shape, "old", sc)])
        print(f"   {sc}: new0/old {o / min(x[0] for x in t[(shape, 'new0', sc)]):.3f}  new1/old {o / min(x[0] for x in t[(shape, 'new1', sc)]):.3f}"
              f"  bits old=new {len({x[3] for c in ('old', 'new0', 'new1') for x in t[(shape, c, sc)]}) == 1}")
PY
  echo "== causal two-buffer draft $(el)"
  mkdir -p "$O/causal"
  for r in 1 2; do
    for cfg in def c80 dq2; do
      case $cfg in
        def) envs="" ;;
        c80) envs="DASH_BWD_SM90_D128_CAUSAL_BM80=1 DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=0" ;;
        dq2) envs="DASH_BWD_SM90_D128_CAUSAL_BM80=1 DASH_BWD_SM90_BLOCK_M=80 DASH_BWD_SM90_DQ2=1" ;;
      esac
      env $envs timeout -k 5 100 bins/new/dash-attn bench --hdim 128 --causal 1 --seqlen 1024,2048,4096,8192,16384 \
        --schedules descending,ascending,spt,atomic --json "$O/causal/$cfg-r$r.json" > "$O/causal/$cfg-r$r.log" 2>&1 || echo "bench $cfg r$r rc $?"
    done
  done
  python3 - "$O/causal" <<'PY'
import json, sys
O = sys.argv[1]
t = {}
for cfg in ("def", "c80", "dq2"):
    for r in (1, 2):
        try:
            rows = json.load(open(f"{O}/{cfg}-r{r}.json"))
        except Exception as e:
            print(cfg, r, e); continue
        for row in rows:
            t.setdefault((cfg, row["schedule"], row["seqlen"]), []).append((row["bwd_ms"], row["block_m"], row.get("dq_stage_bufs"), row["bwd_tflops"], row["grad_hash"]))
seqs = sorted({k[2] for k in t})
print("hdim 128 causal, TFLOP/s (min-time of 2 rounds) [block_m/bufs]; speed / def; bits c80 = dq2")
for sc in ("descending", "ascending", "spt", "atomic"):
    for s in seqs:
        v = {c: min(t[(c, sc, s)]) for c in ("def", "c80", "dq2") if (c, sc, s) in t}
        if "def" not in v: continue
        same = "" if sc == "atomic" else ("bits= " if len({v[c][4] for c in v if c != "def"}) == 1 else "BITS DIFFER ")
        print(f"{sc:10s} {s:6d} " + "  ".join(f"{c} {v[c][3]:6.1f} [{v[c][1]}/{v[c][2]}] {v['def'][0] / v[c][0]:.3f}" for c in v) + f"  {same}")
for s in seqs:
    line = []
    for c in ("def", "c80", "dq2"):
        b = min((min(t[(c, sc, s)])[0], sc) for sc in ("descending", "ascending", "spt") if (c, sc, s) in t)
        line.append(f"{c} {b[1]} {b[0]:.3f}")
    print(f"best det {s}: " + ", ".join(line))
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
