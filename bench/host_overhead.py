#!/usr/bin/env python
"""Host time per attention call (issue 6): how long the CPU takes to issue one forward + backward
through each path, on a shape whose GPU work is small enough that the host sets the pace.

Paths: dash (dash_attn.attention's default eager autograd.Function path), dash_op (the
torch.library custom ops, as under torch.compile: dash_attn._ops.eager_function(False)),
sdpa_cudnn and sdpa_flash (PyTorch's SDPA, C++).
For each: N iterations of fwd + autograd.grad with no synchronisation inside the loop; reported:
host microseconds per iteration (wall time of the loop / N, then a sync outside the timing) and
the stream time of the same loop (CUDA events from before the first launch to after the last:
~ host time when host-bound, the GPU time otherwise), median over --rounds interleaved rounds. Host ~
stream means the path is host-bound at this shape; the difference between paths is then their host
overhead per layer and step.

  python bench/host_overhead.py                      # b=1 s=128 h=6/2 d=128, 300 iterations x 5 rounds
  python bench/host_overhead.py --seqlen 2048 --batch 8   # the training shape of examples/train_llama.py
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seqlen", type=int, default=128)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--hdim", type=int, default=128)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--paths", default="dash,dash_op,sdpa_cudnn,sdpa_flash")
    ap.add_argument("--schedule", default="auto", help="dash's backward schedule (auto: as examples/train_llama.py)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import dash_attn
    from dash_attn import _ops
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dev, dt = "cuda", torch.bfloat16
    g = torch.Generator(device=dev).manual_seed(0)
    b, s, hq, hkv, d = args.batch, args.seqlen, args.heads, args.kv_heads, args.hdim
    q = torch.randn(b, s, hq, d, device=dev, dtype=dt, generator=g, requires_grad=True)
    k = torch.randn(b, s, hkv, d, device=dev, dtype=dt, generator=g, requires_grad=True)
    v = torch.randn(b, s, hkv, d, device=dev, dtype=dt, generator=g, requires_grad=True)
    do = torch.randn(b, s, hq, d, device=dev, dtype=dt, generator=g)

    def dash_path(eager):
        def step():
            with _ops.eager_function(eager):  # False: the custom ops
                o = dash_attn.attention(q, k, v, causal=True, schedule=args.schedule, deterministic=True)
            return torch.autograd.grad(o, (q, k, v), do)
        return step

    def sdpa_path(backend):
        def step():
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                   is_causal=True, enable_gqa=hq != hkv)
                return torch.autograd.grad(o, (q, k, v), do.transpose(1, 2))
        return step

    paths = {"dash": dash_path(True), "dash_op": dash_path(False),
             "sdpa_cudnn": sdpa_path(SDPBackend.CUDNN_ATTENTION), "sdpa_flash": sdpa_path(SDPBackend.FLASH_ATTENTION)}
    names = [n for n in args.paths.split(",") if n]
    res = {n: {"host_us": [], "stream_us": []} for n in names}
    for n in names:  # warm-up (plans, first-call work)
        for _ in range(20):
            paths[n]()
    torch.cuda.synchronize()
    for r in range(args.rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            e0.record()
            t0 = time.perf_counter()
            for _ in range(args.iters):
                paths[n]()
            t1 = time.perf_counter()
            e1.record()
            torch.cuda.synchronize()
            res[n]["host_us"].append((t1 - t0) / args.iters * 1e6)
            res[n]["stream_us"].append(e0.elapsed_time(e1) * 1e3 / args.iters)
    print(f"[host_overhead] {torch.cuda.get_device_name()}, torch {torch.__version__}, b={b} s={s} h={hq}/{hkv} d={d}, "
          f"{args.iters} iterations x {args.rounds} rounds (median), fwd + bwd per iteration")
    for n in names:
        h, st = statistics.median(res[n]["host_us"]), statistics.median(res[n]["stream_us"])
        res[n].update(host_us_median=h, stream_us_median=st)
        print(f"  {n:<12} host {h:8.1f} us/iter   stream {st:8.1f} us/iter   {'host-bound' if h > 0.9 * st else ''}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": res}, f, indent=1)
    return res


if __name__ == "__main__":
    main()
