#!/usr/bin/env python3
"""cuDNN SDPA's forward and backward on one shape of the standard sweep, for Nsight Compute: one
warm-up forward + backward, then one more inside cudaProfilerStart / Stop, so that
`ncu --profile-from-start off` captures exactly one forward and one backward (twenty-fourth
session: what cuDNN's kernels are, their launch shapes and tensor-pipe use, against ours).
  ncu --profile-from-start off ... python scripts/cudnn_profile.py [--hdim 128] [--seqlen 4096,8192]
      [--causal] [--tokens 16384] [--hidden 2048]"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ap = argparse.ArgumentParser()
ap.add_argument("--hdim", type=int, default=128)
ap.add_argument("--seqlen", default="8192", help="comma-separated; one profiled fwd + bwd each")
ap.add_argument("--tokens", type=int, default=16384)
ap.add_argument("--hidden", type=int, default=2048)
ap.add_argument("--causal", action="store_true")
a = ap.parse_args()
h = a.hidden // a.hdim
for seqlen in (int(x) for x in a.seqlen.split(",")):
    b = max(1, a.tokens // seqlen)
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v, do = (torch.randn(b, seqlen, h, a.hdim, device="cuda", dtype=torch.bfloat16, generator=g)
                   for _ in range(4))
    q, k, v = (t.requires_grad_() for t in (q, k, v))

    def step():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=a.causal)
        return torch.autograd.grad(o, (q, k, v), do.transpose(1, 2))

    step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"cudnn sdpa b={b} s={seqlen} h={h} d={a.hdim} causal={a.causal}: profiled one fwd + bwd")
    del q, k, v, do
