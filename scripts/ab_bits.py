#!/usr/bin/env python3
"""Bits check of an A/B (scripts/gpu-binary-ab.sh output): the grad_hash of every deterministic row
(every schedule but atomic) must be equal over all builds and rounds.
  ab_bits.py OUTDIR NBUILDS     (prints one line per differing row and a summary; exit 1 if any differ)"""
import glob
import json
import sys

out, nbuilds = sys.argv[1], int(sys.argv[2])
rows = {}
for f in sorted(glob.glob(f"{out}/ab-r*-*-hdim*.json")):
    v = f.split("/")[-1].split("-")[2]
    for e in json.load(open(f)):
        if e["schedule"] == "atomic":
            continue
        rows.setdefault((e["hdim"], e["causal"], e["seqlen"], e["schedule"]), {}).setdefault(v, set()).add(e["grad_hash"])
same = diff = 0
for k, d in sorted(rows.items()):
    if len(set().union(*d.values())) == 1 and len(d) == nbuilds:
        same += 1
    else:
        diff += 1
        print("DIFFERS", k, d)
print(f"bits: {same} deterministic rows equal over {nbuilds} builds and every round, {diff} differ")
sys.exit(1 if diff else 0)
