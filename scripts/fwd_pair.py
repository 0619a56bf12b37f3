#!/usr/bin/env python3
"""Forward only, dash against cuDNN SDPA, in one process on the same tensors (diagnostic for the
gap between `dash-attn bench`'s forward and peers.py's; seventeenth session). For each shape and
input distribution (randn as peers.py, uniform as `dash-attn bench`), alternating blocks of
`--iters` back-to-back forwards per implementation, `--rounds` times; CUDA events around each
block; prints the min and median ms per forward and dash / cuDNN (time ratio > 1: dash faster).
With --grad: q/k/v require grad (autograd recording, as peers.py's "fwd").
  fwd_pair.py [--hdim 128] [--seqlen 4096,8192,16384] [--iters 20] [--rounds 5] [--grad]"""
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
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--grad", action="store_true")
a = ap.parse_args()
dev = torch.device("cuda")
h = a.hidden // a.hdim


def dash_fwd(q, k, v):
    return dash_attn.attention(q, k, v, causal=False)


def cudnn_fwd(q, k, v):
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)


for s in [int(x) for x in a.seqlen.split(",")]:
    b = a.tokens // s
    flops = 4 * b * h * s * s * a.hdim
    for dist in ("randn", "uniform"):
        g = torch.Generator(device=dev).manual_seed(1234)
        if dist == "randn":
            qkv = [torch.randn(b, s, h, a.hdim, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(3)]
        else:
            qkv = [torch.rand(b, s, h, a.hdim, device=dev, dtype=torch.bfloat16, generator=g) * 2 - 1 for _ in range(3)]
        if a.grad:
            qkv = [t.requires_grad_() for t in qkv]
        times = {"dash": [], "cudnn": []}
        with torch.set_grad_enabled(a.grad):
            for fn in (dash_fwd, cudnn_fwd):  # warm-up
                for _ in range(3):
                    fn(*qkv)
            torch.cuda.synchronize()
            for _ in range(a.rounds):
                for name, fn in (("dash", dash_fwd), ("cudnn", cudnn_fwd)):
                    times[name].append(block_ms(lambda: fn(*qkv), a.iters))
        print(f"hdim {a.hdim} full {s:6} {dist:7} grad {int(a.grad)}  " + compare(times["dash"], times["cudnn"], flops),
              flush=True)
