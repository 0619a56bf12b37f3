"""Why does peers.py read our backward 5-10% below `dash-attn bench` for the same kernel?

Times one backward per iteration (CUDA events around torch.autograd.grad only) for dash and cuDNN
on the same tensors, in four modes, interleaved over rounds:
  bwd        backward after backward (one forward's graph, retain_graph=True): like `dash-attn bench`
  fwdbwd     forward then backward, as in peers.py
  fwd_sleep  forward, a 2 ms GPU spin (torch.cuda._sleep: no memory traffic, low power), backward
  fwd_flush  forward, a 256 MB memset (L2 state replaced), backward
If `bwd` matches the CLI and `fwdbwd` drops for both dash and cuDNN, the gap is GPU state that peers
gives both alike; if only dash drops, our kernel is sensitive to something the forward leaves.

    python bench/probes/peers_gap.py --shapes 128:causal:16384,128:full:16384 --json out.json
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="128:causal:16384,128:full:16384,128:full:4096")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    import dash_attn
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dev = torch.device("cuda")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    cycles_2ms = int(torch.cuda.get_device_properties(dev).clock_rate * 1e3 * 2e-3)  # clock_rate in kHz
    out = []
    for spec in args.shapes.split(","):
        d, mask, s = spec.split(":")
        d, s, causal = int(d), int(s), mask == "causal"
        b, h = max(1, args.tokens // s), args.hidden // d
        fl = 2.5 * 4.0 * b * h * s * s * d / (2 if causal else 1)
        g = torch.Generator(device=dev).manual_seed(7 + s + d)
        q, k, v, dout = (torch.randn(b, s, h, d, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(4))
        for t in (q, k, v):
            t.requires_grad_(True)
        sched = "descending" if causal else "shift"

        def dash_fn():
            return dash_attn.attention(q, k, v, causal=causal, schedule=sched, deterministic=True)

        def cudnn_fn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                   is_causal=causal)
            return o.transpose(1, 2)

        impls = {"dash:" + sched: dash_fn, "cudnn": cudnn_fn}
        modes = ("bwd", "fwdbwd", "fwd_sleep", "fwd_flush")
        times = {(i, m): [] for i in impls for m in modes}
        for fn in impls.values():  # first calls (plans), off the clock
            torch.autograd.grad(fn(), (q, k, v), dout)
        torch.cuda.synchronize()
        for r in range(args.rounds):
            order = [(i, m) for i in impls for m in modes]
            if r % 2:
                order = order[::-1]
            for name, mode in order:
                fn = impls[name]
                o = fn()
                for _ in range(2):  # warm-up
                    torch.autograd.grad(o, (q, k, v), dout, retain_graph=True)
                evs = []
                for _ in range(args.reps):
                    if mode != "bwd":
                        o = fn()
                        if mode == "fwd_sleep":
                            torch.cuda._sleep(cycles_2ms)
                        elif mode == "fwd_flush":
                            flush.zero_()
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    torch.autograd.grad(o, (q, k, v), dout, retain_graph=True)
                    e1.record()
                    evs.append((e0, e1))
                torch.cuda.synchronize()
                times[(name, mode)] += [a.elapsed_time(bb) for a, bb in evs]
                del o
        print(f"\nhdim {d} {mask} {s} (batch {b}, heads {h}): median bwd ms / TFLOP/s (min ms)")
        for name in impls:
            cells = []
            for mode in modes:
                t = times[(name, mode)]
                med = statistics.median(t)
                cells.append(f"{mode} {med:.3f} / {fl / med * 1e-9:.0f} ({min(t):.3f})")
                out.append({"hdim": d, "mask": mask, "seqlen": s, "impl": name, "mode": mode, "bwd_ms": med,
                            "bwd_ms_min": min(t), "tflops": fl / med * 1e-9, "all_ms": [round(x, 4) for x in t]})
            print(f"  {name:16s} " + " | ".join(cells))
        for mode in modes:
            a = statistics.median(times[("cudnn", mode)])
            bq = statistics.median(times[("dash:" + sched, mode)])
            print(f"  dash / cuDNN speed, {mode}: {a / bq:.3f}")
        del q, k, v, dout
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
