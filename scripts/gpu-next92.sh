#!/usr/bin/env bash
# GPU machine (thirty-third session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests).
#   PART=1: the completion queue (DASH_BWD_POST_QUEUE=1): its test and the PDL / post-SMs tests, memcheck of
#           one small launch with it, then an A/B of (queue, post SMs) in {(0,0), (1,0), (0,2), (1,2), (1,4)}:
#           ROUNDS (2) interleaved rounds of `dash-attn bench` at hdim 128 full / causal and hdim 64 full,
#           1k-16k; speed of each config over (0,0) per schedule and length (min of the rounds), bits equal.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next92
{
cat "$O/machine.txt"
if [ "${PART:-1}" = 1 ]; then
  echo "== tests $(el)"
  timeout -k 5 240 bins/new/dash_gpu_tests --gtest_filter="${TESTS:-BwdSm90PostQueue.*:BwdSm90Pdl.*:BwdSm90PostSms.*}" > "$O/tests.log" 2>&1
  echo "tests rc $? $(el)"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|compared" "$O/tests.log" | head
  echo "== memcheck $(el)"
  DASH_BWD_POST_QUEUE=1 DASH_BWD_POST_SMS=3 timeout -k 5 120 compute-sanitizer --tool memcheck bins/new/dash-attn bench \
    --hdim 128 --causal 1 --seqlen 1000 --batch 2 --heads 4 --kv-heads 2 --schedules descending,shift,symmetric_shift,spt --reps 1 \
    > "$O/san-memcheck.log" 2>&1
  echo "memcheck rc $? $(grep -E 'ERROR SUMMARY' "$O/san-memcheck.log" | tr '\n' ' ')"
  echo "== A/B $(el)"
  CONFIGS=${CONFIGS:-"0,0 1,0 0,2 1,2 1,4"}
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for c in $CONFIGS; do
      q=${c%,*}; k=${c#*,}
      for spec in "128 0 descending,ascending,shift" "128 1 descending,spt,symmetric_shift" "64 0 descending,shift"; do
        set -- $spec
        DASH_BWD_POST_QUEUE=$q DASH_BWD_POST_SMS=$k timeout -k 5 90 bins/new/dash-attn bench --hdim $1 --causal $2 \
          --seqlen 1024,2048,4096,8192,16384 --schedules $3 --json "$O/ab-q$q-k$k-d$1-c$2-r$r.json" > /dev/null 2>&1 \
          || echo "bench q$q k$k d$1 c$2 r$r rc $?"
      done
    done
    echo "round $r done $(el)"
  done
  python3 - "$O" "$CONFIGS" "${ROUNDS:-2}" <<'PY'
import json, sys, glob
O, configs, rounds = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])
t, h = {}, {}
for c in configs:
    q, k = c.split(",")
    for f in glob.glob(f"{O}/ab-q{q}-k{k}-d*-r*.json"):
        for row in json.load(open(f)):
            key = (row["hdim"], row["causal"], row["schedule"], row["seqlen"])
            t.setdefault((c,) + key, []).append(row["bwd_ms"])
            h.setdefault(key, set()).add(row["grad_hash"])
            if row.get("post_queue") is not None and row["post_queue"] != (q == "1" and row.get("post_poll")):
                print("post_queue flag mismatch", c, key, row.get("post_queue"), row.get("post_poll"))
keys = sorted({k[1:] for k in t})
print(f"speed over (queue 0, post SMs 0), min of {rounds} rounds; columns " + "  ".join(configs[1:]) + "   (q0k0 ms)")
for key in keys:
    base = min(t[(configs[0],) + key])
    print(f"hdim {key[0]:3d} {'causal' if key[1] else 'full  '} {key[2]:15s} {key[3]:6d} " +
          "  ".join(f"{base / min(t[(c,) + key]):.3f}" for c in configs[1:] if (c,) + key in t) + f"   ({base:.3f})" +
          ("" if len(h[key]) == 1 else f"   BITS DIFFER ({len(h[key])} hashes)"))
PY
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
