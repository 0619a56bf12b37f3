#!/usr/bin/env python3
"""`auto` away from the standard sweep (gpu-next57.sh): per shape (files auto-{tag}-r{round}.json of
`dash-attn bench` with every schedule and auto), the best deterministic schedule (min over rounds),
what auto ran, and auto's time against the best; a summary of the points within 3%.
  auto_sweep.py FILE.json..."""
import json
import re
import sys
from collections import defaultdict

DET = ("ascending", "spt", "descending", "shift", "symmetric_shift")
t = defaultdict(lambda: defaultdict(list))  # (tag, hdim, causal, seqlen) -> schedule -> [ms]
ran = {}
for f in sys.argv[1:]:
    m = re.search(r"auto-(.+)-r\d+\.json$", f)
    if not m:
        continue
    for e in json.load(open(f)):
        key = (m.group(1), e["hdim"], e["causal"], e["seqlen"])
        t[key][e["schedule"]].append(e["bwd_ms"])
        if e["schedule"] == "auto":
            ran[key] = e["ran"]
ok = n = 0
print("shape (b x hq / hkv), hdim, mask, seqlen: best deterministic (ms), auto ran (ms), best / auto, atomic / best")
for key in sorted(t):
    row = {s: min(v) for s, v in t[key].items()}
    dets = {s: row[s] for s in DET if s in row}
    if not dets or "auto" not in row:
        continue
    best = min(dets, key=dets.get)
    r = dets[best] / row["auto"]
    n += 1
    ok += r >= 0.97
    tag, hdim, causal, seqlen = key
    atom = f"{row['atomic'] / dets[best]:.3f}" if "atomic" in row else "-"
    flag = "" if r >= 0.97 else "   <-- miss"
    print(f"{tag:14} {hdim:3} {'causal' if causal else 'full':6} {seqlen:6}: {best:15} {dets[best]:8.3f}  "
          f"{ran[key]:15} {row['auto']:8.3f}  {r:.3f}  {atom}{flag}")
print(f"auto within 3% of the best deterministic schedule: {ok}/{n}")
