#!/usr/bin/env python3
"""Table of an environment A/B of one binary (gpu-next94.sh, gpu-next95.sh): `dash-attn bench --json
OUT/ab-CFG-...-rR.json` files, CFG the configuration's name (no '-'). Per (hdim, mask, schedule, seqlen):
speed of each configuration over BASE, from the minimum over rounds, the base's ms, what the last
configuration ran (`ran`: auto's pick; `post_queue`), and a mark where the gradient hashes differ between
configurations or rounds.
    env_ab_table.py OUTDIR BASE CFG [CFG ...] [--spread: every round's ms too]
        [--schedule-blind: configurations that run different schedules (gpu-next120.sh: atomic against
         unordered shift) compare at the same (hdim, mask, seqlen); no bits mark]"""
import glob
import json
import sys

flags = [a for a in sys.argv[1:] if a.startswith("--")]
out, base, *cfgs = [a for a in sys.argv[1:] if not a.startswith("--")]
t, h, info = {}, {}, {}
for f in sorted(glob.glob(f"{out}/ab-*-r*.json")):
    cfg = f.split("/ab-")[1].split("-")[0]
    for row in json.load(open(f)):
        key = (row["hdim"], row["causal"], "*" if "--schedule-blind" in flags else row["schedule"], row["seqlen"])
        t.setdefault((cfg,) + key, []).append(row["bwd_ms"])
        h.setdefault(key, set()).add(row["grad_hash"])
        if cfg == cfgs[-1]:
            info[key] = f'{row["ran"]}, queue {row.get("post_queue")}, head block {row.get("head_block")}'
print(f"speed over {base} (min of the rounds): {', '.join(cfgs)}   ({base} ms; {cfgs[-1]} ran)")
for key in sorted({k[1:] for k in t}):
    if (base,) + key not in t:
        continue
    b = min(t[(base,) + key])
    print(f"hdim {key[0]:3d} {'causal' if key[1] else 'full  '} {key[2]:15s} {key[3]:6d} " + "  ".join(
        f"{b / min(t[(c,) + key]):.3f}" if (c,) + key in t else "  -  " for c in cfgs) + f"   ({b:.3f}; {info.get(key, '-')})" +
        ("" if len(h[key]) == 1 or "--schedule-blind" in flags else "  BITS DIFFER"))
    if "--spread" in flags:  # every round's ms, in file order
        for c in [base] + cfgs:
            print(f"    {c:10s} " + " ".join(f"{x:.3f}" for x in t.get((c,) + key, [])))
