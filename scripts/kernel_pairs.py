#!/usr/bin/env python3
"""Kernel-alone times of our forward / backward against cuDNN SDPA's, from two ncu captures
(`ncu --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second`, twenty-fourth
session, scripts/gpu-next43.sh):
  OURS.csv: `dash-attn bench --reps 1` over several lengths (per length: forward warm-up + timed,
            then per schedule a warm-up and a timed backward: preprocess, main, postprocess);
  CUDNN.csv: scripts/cudnn_profile.py over the same lengths (one profiled forward + backward each:
            fprop, dot(dO, O), bprop, dQ conversion).
  kernel_pairs.py OURS.csv CUDNN.csv LABEL SEQLEN,SEQLEN,...
Per length: the timed forward and the last timed backward (its kernels summed, ncu serialises
them, so the programmatic overlap of our pre/postprocess is not counted), time ratios cuDNN / ours
(> 1: ours faster), and the SM clock ncu saw during the main kernels."""
import csv
import sys

SCALE = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}


def launches(path):
    rows = [r for r in csv.reader(open(path)) if len(r) > 10]
    hdr = rows[0]
    i_id, i_k, i_m, i_v, i_u = (hdr.index(c) for c in ("ID", "Kernel Name", "Metric Name", "Metric Value", "Metric Unit"))
    out = {}
    for r in rows[1:]:
        d = out.setdefault(int(r[i_id]), {"name": r[i_k]})
        val = float(r[i_v].replace(",", ""))
        if r[i_m] == "gpu__time_duration.sum":
            d["us"] = val * SCALE.get(r[i_u], float("nan"))
        else:
            d["ghz"] = val / 1e9 if r[i_u] in ("hz", "Hz", "cycle/second") else val
    return [out[k] for k in sorted(out)]


def split(ks, is_fwd):
    """Groups starting at each run of forward kernels: [(fwd kernels, other kernels)]."""
    groups = []
    for k in ks:
        if is_fwd(k["name"]):
            if not groups or groups[-1][1]:
                groups.append(([], []))
            groups[-1][0].append(k)
        elif groups:
            groups[-1][1].append(k)
    return groups


def main():
    ours, cud, label, seqlens = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
    og = split(launches(ours), lambda n: "attn_fwd" in n)
    cg = split(launches(cud), lambda n: "fprop" in n)
    print(f"{label}: kernel-alone times under ncu (us; ratio = cuDNN / ours, > 1: ours faster)")
    for s, (of, ob), (cf, cb) in zip(seqlens, og, cg):
        mains = [i for i, k in enumerate(ob) if "main" in k["name"]]
        last = mains[-1]
        nxt = len(ob)
        ob_t = ob[last - 1: nxt]  # preprocess, main, postprocess(es) of the timed backward
        o_fwd, c_fwd = of[-1]["us"], cf[-1]["us"]
        o_bwd, c_bwd = sum(k["us"] for k in ob_t), sum(k["us"] for k in cb)
        o_main = ob[last]["us"]
        c_main = max(cb, key=lambda k: k["us"])
        print(f"  {s:>6}: fwd {o_fwd:8.1f} vs {c_fwd:8.1f} ({c_fwd / o_fwd:.3f}; {of[-1].get('ghz', 0):.2f} / "
              f"{cf[-1].get('ghz', 0):.2f} GHz)  bwd main {o_main:8.1f} vs {c_main['us']:8.1f} ({c_main['us'] / o_main:.3f}; "
              f"{ob[last].get('ghz', 0):.2f} / {c_main.get('ghz', 0):.2f} GHz)  bwd all {o_bwd:8.1f} vs {c_bwd:8.1f} "
              f"({c_bwd / o_bwd:.3f}; ours {len(ob_t)} kernels, cuDNN {len(cb)})")


main()
