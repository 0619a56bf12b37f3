"""Shared by scripts/fwd_pair.py and scripts/bwd_pair.py: one timed block of back-to-back calls,
and the line that compares dash's block times with cuDNN's."""
import statistics

import torch


def block_ms(fn, iters):
    """ms per call of `iters` back-to-back calls of fn(), CUDA events around the block."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(iters):
        fn()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) / iters


def compare(d, c, flops, dash_name="dash"):
    """min / median ms and TFLOP/s of both, and cuDNN / dash time (> 1: dash faster)."""
    return (f"{dash_name} min {min(d):.4f} med {statistics.median(d):.4f} ms ({flops / min(d) * 1e-9:.0f} TF/s)  "
            f"cudnn min {min(c):.4f} med {statistics.median(c):.4f} ms ({flops / min(c) * 1e-9:.0f} TF/s)  "
            f"cudnn/dash time: min {min(c) / min(d):.3f} med {statistics.median(c) / statistics.median(d):.3f}")
