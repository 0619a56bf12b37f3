#!/usr/bin/env python3
"""Backward only, dash against cuDNN SDPA, in one process on the same tensors (twenty-fourth
session; the backward's counterpart of scripts/fwd_pair.py). Per shape: one forward each (off the
clock), then alternating blocks of `--iters` back-to-back backwards per implementation
(torch.autograd.grad with retain_graph), `--rounds` times; CUDA events around each block; randn
inputs as peers.py. Prints the min and median ms per backward and cuDNN / dash time (> 1: dash
faster), FlashAttention FLOP convention (2.5 x the forward's, halved for causal).
  bwd_pair.py [--hdim 128] [--seqlen 4096,8192,16384] [--causal] [--schedule auto] [--iters 10] [--rounds 5]"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import dash_attn
from pair_timing import block_ms, compare  # scripts/pair_timing.py

ap = argparse.ArgumentParser()
ap.add_argument("--hdim", type=int, default=128)
ap.add_argument("--seqlen", default="4096,8192,16384")
ap.add_argument("--tokens", type=int, default=16384)
ap.add_argument("--hidden", type=int, default=2048)
ap.add_argument("--causal", action="store_true")
ap.add_argument("--schedule", default="auto")
ap.add_argument("--iters", type=int, default=10)
ap.add_argument("--rounds", type=int, default=5)
a = ap.parse_args()
dev = torch.device("cuda")
h = a.hidden // a.hdim
mask = "causal" if a.causal else "full"

for s in [int(x) for x in a.seqlen.split(",")]:
    b = max(1, a.tokens // s)
    flops = 2.5 * 4 * b * h * s * s * a.hdim * (0.5 if a.causal else 1.0)
    g = torch.Generator(device=dev).manual_seed(1234)
    q, k, v, do = (torch.randn(b, s, h, a.hdim, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(4))
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    o_dash = dash_attn.attention(q, k, v, causal=a.causal, schedule=a.schedule, deterministic=a.schedule != "atomic")
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        o_cud = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=a.causal).transpose(1, 2)
    impls = {"dash": o_dash, "cudnn": o_cud}
    times = {n: [] for n in impls}

    def run(name):
        return torch.autograd.grad(impls[name], (q, k, v), do, retain_graph=True)

    for n in impls:  # warm-up
        for _ in range(2):
            run(n)
    torch.cuda.synchronize()
    for r in range(a.rounds):
        order = list(impls) if r % 2 == 0 else list(impls)[::-1]
        for n in order:
            times[n].append(block_ms(lambda: run(n), a.iters))
    print(f"hdim {a.hdim} {mask} {s:6} " + compare(times["dash"], times["cudnn"], flops, f"dash:{a.schedule}"), flush=True)
    del q, k, v, do, o_dash, o_cud, impls
