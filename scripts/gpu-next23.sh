#!/usr/bin/env bash
# GPU machine (nineteenth session): why the forward's 176-key tiles ran at 0.72-0.77 of the 128-key
# ones (gpu-next22.sh). Prebuilt binaries (bins.tgz; carry [".snap"]); $OUT/all.tgz.
#   1. `dash-attn bench` forward at hdim 128 full 4k / 16k, 2 rounds: 128 / 176 keys, each with the
#      ping-pong variant (default) and without it (DASH_FWD_PINGPONG=0: 2-stage ring for both);
#   2. ncu (full set, source counters) of one forward launch at full 8k, 128 and 176 keys; the hot
#      loop's stall pieces by scripts/ncu_stalls.py --phases.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next23
unset DASH_FWD_BN176 DASH_FWD_PINGPONG
{
for r in 1 2; do
  for pp in 1 0; do
    for e in 0 1; do
      DASH_FWD_PINGPONG=$pp DASH_FWD_BN176=$e timeout -k 5 60 bins/new/dash-attn bench --hdim 128 --causal 0 \
        --seqlen 4096,16384 --schedules atomic --json "$O/f-pp$pp-bn$e-r$r.json" > /dev/null 2>&1 || echo "bench rc $?"
    done
  done
done
python3 - "$O" <<'PY'
import json, sys
O = sys.argv[1]
for pp in (1, 0):
    for e in (0, 1):
        t = {}
        for r in (1, 2):
            for row in json.load(open(f"{O}/f-pp{pp}-bn{e}-r{r}.json")):
                t.setdefault(row["seqlen"], []).append(row["fwd_ms"])
        print(f"pingpong {pp} keys {176 if e else 128}: " + "  ".join(f"{s}: {min(v):.4f} ms" for s, v in sorted(t.items())))
PY
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
for e in 0 1; do
  DASH_FWD_BN176=$e "$NCU" --clock-control none --set full --import-source no --kernel-name regex:attn_fwd_sm90 \
    --launch-skip 2 --launch-count 1 -f -o "$O/fwd-bn$e" bins/new/dash-attn bench --hdim 128 --causal 0 --seqlen 8192 \
    --schedules atomic --reps 1 > "$O/ncu-bn$e.log" 2>&1 || tail -5 "$O/ncu-bn$e.log"
  "$NCU" --import "$O/fwd-bn$e.ncu-rep" --page details > "$O/fwd-bn$e.txt" 2>&1
  "$NCU" --import "$O/fwd-bn$e.ncu-rep" --page source --csv --print-source sass > "$O/fwd-bn$e-sass.csv" 2>/dev/null
  echo "== keys $([ $e = 1 ] && echo 176 || echo 128)"
  grep -E "Duration|Registers Per|Tensor|Issue Slots Busy|No Eligible|L1/TEX Hit|Bank Conflicts|Shared Memory" "$O/fwd-bn$e.txt" | head -12
  python3 scripts/ncu_stalls.py "$O/fwd-bn$e-sass.csv" --phases --top 12 > "$O/phases-bn$e.txt" 2>&1; head -24 "$O/phases-bn$e.txt"
done
rm -f "$O"/*.ncu-rep
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
