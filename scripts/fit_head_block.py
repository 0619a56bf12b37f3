#!/usr/bin/env python3
"""The head-block A/B (H100, thirty-fifth session: docs/data/s35-h100/next99 and next100, `DASH_HEAD_BLOCK`
4 / 8 / 16 / 32, 3 interleaved rounds, min over rounds) against the planner's L2 reuse term
(CostParams::l2_mbytes / l2_penalty / l2_knee, docs/schedules.md "Head blocks and the L2").

For every measured (hdim, mask, schedule, seqlen) of ascending / descending and every head block B
measured there, the speed of B over 16 (time(16) / time(B)) measured and predicted by `dash-attn plan
--schedule S --head-block B --block-m BM` (BM: the tile the row ran, 64 at hdim 128, 96 at hdim 64).
    fit_head_block.py [--bin build-helper/dash-attn] [--param NAME=VALUE ...]   score one set (default:
        the fitted term as compiled, `dash-attn plan --l2`: kSm90Params with kSm90L2Term; --param
        l2_penalty=0 scores the model without it)
    fit_head_block.py --fit    grid over l2_penalty x l2_knee (l2_mbytes 50: the H100's L2)
Scores: sign agreement (where the measured speed differs from 1 by more than 1%), rms of log(predicted
/ measured speed), and the rows."""
import argparse
import concurrent.futures as cf
import glob
import itertools
import json
import math
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = ["docs/data/s35-h100/next99", "docs/data/s35-h100/next100"]


def measured():
    """{(hdim, causal, schedule, seqlen): {hb: (min ms, row)}} of ascending / descending."""
    t = {}
    for run in RUNS:
        for f in sorted(glob.glob(os.path.join(ROOT, run, "ab-hb*-r*.json"))):
            hb = int(os.path.basename(f).split("-")[1][2:])
            for row in json.load(open(f)):
                if row["schedule"] not in ("ascending", "descending"):
                    continue
                key = (row["hdim"], row["causal"], row["schedule"], row["seqlen"])
                cur = t.setdefault(key, {}).get(hb)
                if cur is None or row["bwd_ms"] < cur[0]:
                    t[key][hb] = (row["bwd_ms"], row)
    return {k: v for k, v in t.items() if 16 in v and len(v) > 1}


def predict(binary, row, hb, params):
    cmd = [binary, "plan", "--json", "--schedule", row["schedule"], "--head-block", str(hb), "--batch",
           str(row["batch"]), "--heads", str(row["heads"]), "--kv-heads", str(row["kv_heads"]), "--seqlen",
           str(row["seqlen"]), "--hdim", str(row["hdim"]), "--block-m", str(row["block_m"]),
           "--causal" if row["causal"] else "--full", "--l2"]
    for p in params:
        cmd += ["--param", p]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return out[0]["makespan"]


def score(binary, data, params, pool, show=False):
    jobs = {}
    for key, by_hb in data.items():
        for hb, (_, row) in by_hb.items():
            jobs[(key, hb)] = pool.submit(predict, binary, row, hb, params)
    pred = {k: f.result() for k, f in jobs.items()}
    logs, logs16, agree, signed, b32 = [], [], 0, 0, []
    lines = []
    for key in sorted(data):
        by_hb = data[key]
        for hb in sorted(by_hb):
            if hb == 16:
                continue
            m = by_hb[16][0] / by_hb[hb][0]
            p = pred[(key, 16)] / pred[(key, hb)]
            logs.append(math.log(p / m))
            if hb < 32:
                logs16.append(math.log(p / m))
            else:
                b32.append(p)
            if abs(m - 1) > 0.01:
                signed += 1
                agree += (p > 1) == (m > 1) and abs(p - 1) > 0.001
            lines.append(f"hdim {key[0]:3d} {'causal' if key[1] else 'full  '} {key[2]:10s} {key[3]:5d} "
                         f"B={hb:2d} over 16: measured {m:.3f} predicted {p:.3f}")
    rms = math.sqrt(sum(x * x for x in logs) / len(logs))
    rms16 = math.sqrt(sum(x * x for x in logs16) / len(logs16))
    if show:
        print("\n".join(lines))
    return agree, signed, rms, rms16, b32


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build-helper", "dash-attn"))
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--fit", action="store_true")
    a = ap.parse_args()
    data = measured()
    with cf.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        if not a.fit:
            agree, signed, rms, rms16, b32 = score(a.bin, data, a.param, pool, show=True)
            print(f"{' '.join(a.param) or 'kSm90L2Term'}: signs {agree}/{signed} (|measured - 1| > 1%), "
                  f"rms log ratio error {rms:.4f} ({rms16:.4f} without B=32; B=32 predicted "
                  f"{' '.join(f'{x:.3f}' for x in b32)})")
            return
        results = []
        for pen, knee in itertools.product([0.001, 0.002, 0.003, 0.004, 0.006, 0.01, 0.02], [0.0, 0.5, 1.0, 1.5]):
            params = ["l2_mbytes=50", f"l2_penalty={pen}", f"l2_knee={knee}"] + a.param
            agree, signed, rms, rms16, b32 = score(a.bin, data, params, pool)
            results.append((-agree, rms16, params))
            print(f"{' '.join(params)}: signs {agree}/{signed}, rms {rms:.4f}, without B=32 {rms16:.4f}, B=32 "
                  f"{' '.join(f'{x:.3f}' for x in b32)}", flush=True)
        results.sort()
        print("best:", " ".join(results[0][2]))
        score(a.bin, data, results[0][2], pool, show=True)


if __name__ == "__main__":
    main()
