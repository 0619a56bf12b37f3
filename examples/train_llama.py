#!/usr/bin/env python
"""Reproducible training of a small LLaMA-style decoder with dash_attn (issue 6, items 1-2).

STATUS: ran on 2 H200s through examples/check_reproducible.sh (commit d1ffa51, base preset, 100
steps): the 1-GPU, DDP and FSDP dash runs reproduced their losses and weights bit for bit, the
cuDNN runs did not (docs/perf.md, "Reproducible training").

Model: pre-norm decoder as LLaMA: token embedding -> N x [RMSNorm -> attention (fused QKV, RoPE,
GQA, causal) -> residual, RMSNorm -> SwiGLU MLP -> residual] -> RMSNorm -> LM head. Byte-level
tokens (vocab 256). Presets: `base` (12 layers, d 768, 6 q / 2 kv heads of 128, ffn 2048, 75.9M
parameters), `small` (6 layers, d 512, 4 q / 1 kv heads of 128, ffn 1408, 17.2M), `tiny` (CPU
smoke tests). bf16 autocast, fp32 parameters, AdamW (fp32 state), grad-norm clipping 1.0,
linear warmup + cosine decay.

Data: a corpus generated at start-up by a seeded word-level Markov chain (synthetic English-like
words, sentences and paragraphs; numpy's legacy RandomState, whose stream numpy keeps fixed
across versions). No download, no file. It is cut into non-overlapping windows of seqlen+1
bytes; each epoch visits them in a permutation seeded by (seed, epoch); step s takes windows
[s*G, (s+1)*G) of that order (G = batch * world size) and rank r takes its `batch` consecutive
windows of those (manual sharding, no DistributedSampler).

Attention (`--attn`):
  dash           dash_attn.attention(causal=True, deterministic=True, schedule=--schedule)
  dash_atomic    dash_attn.attention(schedule="atomic"): our non-deterministic mode (extra)
  sdpa_cudnn     F.scaled_dot_product_attention with only the cuDNN backend (non-deterministic);
                 everything else stays as in `dash`, except that deterministic mode is switched
                 to warn_only=True (PyTorch refuses cuDNN attention under strict mode)
  sdpa_detmode   F.scaled_dot_product_attention, PyTorch's own backend choice, under strict
                 torch.use_deterministic_algorithms(True)
  sdpa           SDPA, default backend, no extra context (for CPU smoke tests)
  dash_op        as dash, through the torch.library custom ops instead of the eager autograd.Function
                 path that dash_attn.attention takes by default outside torch.compile (the same kernels
                 and bits; DASH_EAGER_FUNCTION=0 makes every dash run do this)

End-to-end determinism: what this script sets (besides attention)
  * CUBLAS_WORKSPACE_CONFIG=:4096:8, set before torch starts CUDA (cuBLAS picks split-K /
    stream-K reductions per workspace; a fixed config makes GEMMs reproducible and is required
    by torch.use_deterministic_algorithms).
  * torch.use_deterministic_algorithms(True) (strict: an op PyTorch knows to be
    non-deterministic raises instead of running); torch.utils.deterministic.
    fill_uninitialized_memory stays at its default (True).
  * torch.backends.cudnn.deterministic = True, torch.backends.cudnn.benchmark = False (no
    timing-based algorithm choice).
  * Seeds: random.seed, numpy.random.seed, torch.manual_seed, torch.cuda.manual_seed_all, all
    from --seed. Parameters are initialised on the CPU in fp32 from --seed, then moved, so the
    initial weights do not depend on the GPU or the world size. No dropout: nothing else draws
    random numbers.
  * Seeded data order (above), independent of timing, workers or the sampler's state.
  * Collectives: NCCL_ALGO=Ring and NCCL_PROTO=Simple (a fixed reduction algorithm and protocol
    for every message size, instead of NCCL's size/topology-based tuning); NCCL_NVLS_ENABLE=0
    (no NVLink SHARP in-switch reduction; on the workplace's machines it must stay 0 anyway, as
    must TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1); set with
    os.environ.setdefault, so an explicit value from the caller wins (the script prints them).
    DDP: fixed bucket_cap_mb (--bucket-mb, 25), gradient_as_bucket_view, no unused-parameter
    search. FSDP (FSDP2, fully_shard per block + root): fp32 reduce-scatter. The summed value of
    one gradient element depends on the order the ranks' contributions are added, which the
    ring fixes for a given world size; with 2 ranks it is a single commutative addition.
  * nn.Embedding backward on CUDA (sort indices, sum each segment in a fixed order) and
    cross-entropy are not on PyTorch's list of non-deterministic ops; strict deterministic mode
    would raise on any op that is. Verified only by the final-weight hash of
    examples/check_reproducible.sh (not yet run).
  * No torch.compile (inductor autotuning picks kernels by timing), no TF32 changes, no
    gradient accumulation, optimizer foreach (elementwise) AdamW.

What must stay the same for two runs to match bit for bit: the GPU model and count (world
size), the software (PyTorch, CUDA, cuBLAS, cuDNN, NCCL, dash_attn build and driver), every
command-line argument (model size, --batch per GPU, --seqlen, --steps, --lr schedule, --seed,
--attn/--schedule, --dist, --bucket-mb) and the environment variables above. A 1-GPU run and a
2-GPU run are different computations (different batch reduction) and do not match each other.

  python examples/train_llama.py --attn dash --steps 300 --out runs/dash_a
  torchrun --nproc_per_node 2 examples/train_llama.py --dist ddp --attn dash --out runs/ddp_a
  torchrun --nproc_per_node 2 examples/train_llama.py --dist fsdp --attn dash --out runs/fsdp_a
  python examples/train_llama.py --device cpu --preset tiny --attn sdpa --steps 5 --out /tmp/t

Writes to --out: losses.jsonl (one line per step: step, loss (global mean, fp32 value), grad_norm,
lr), summary.json (weights SHA-256, tokens/s, settings, versions), checkpoint.pt (rank 0).
Prints `weights_sha256 <hex>` and `tokens_per_s <n>`.
"""
from __future__ import annotations

import os

# Before torch (and CUDA/NCCL) start. setdefault: a value the caller exported wins.
DET_ENV = {
    "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
    "NCCL_ALGO": "Ring",
    "NCCL_PROTO": "Simple",
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
for _k, _v in DET_ENV.items():
    os.environ.setdefault(_k, _v)

import argparse  # noqa: E402
import contextlib  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

PRESETS = {
    # head_dim 128: dash_attn runs its Hopper (wgmma/TMA) kernels for bf16 head_dim 128.
    "base": dict(layers=12, dim=768, heads=6, kv_heads=2, head_dim=128, ffn=2048),
    "small": dict(layers=6, dim=512, heads=4, kv_heads=1, head_dim=128, ffn=1408),
    "tiny": dict(layers=2, dim=128, heads=4, kv_heads=2, head_dim=32, ffn=352),
}
# dash_op: dash through the torch.library custom ops (dash_attn._ops.eager_function(False)) instead
# of the default eager autograd.Function path: the same kernels and bits, for host-time A/Bs.
ATTNS = ("dash", "dash_atomic", "sdpa_cudnn", "sdpa_detmode", "sdpa", "dash_op")
VOCAB = 256  # bytes
NCCL_SMS = 8  # SMs the dash_attn backward leaves free under DDP/FSDP (see --num-ctas)


# ----------------------------------------------------------------------------------------------
# data: a seeded word-level Markov chain
# ----------------------------------------------------------------------------------------------

def make_corpus(n_bytes: int, seed: int) -> np.ndarray:
    """Deterministic English-like text (uint8), a pure function of (n_bytes, seed).

    2000 words built from syllables; each word has 16 successor slots filled from a Zipf-like
    distribution (repeats encode the transition weights); sentences of 4-20 words, commas,
    capitals, paragraphs, and now and then a small sum "a plus b is c" (a learnable pattern)."""
    rs = np.random.RandomState(seed + 1_000_003)
    onsets = ["b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w",
              "br", "ch", "st", "tr", "th", "sh", "pl", "gr", ""]
    vowels = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "y"]
    codas = ["", "", "n", "r", "s", "t", "l", "nd", "st", "m", "ck"]
    n_words = 2000
    words, seen = [], set()
    while len(words) < n_words:
        k = min(int(rs.geometric(0.5)), 4)  # 1-4 syllables
        w = "".join(onsets[rs.randint(len(onsets))] + vowels[rs.randint(len(vowels))] + codas[rs.randint(len(codas))]
                    for _ in range(k))
        if w not in seen:
            seen.add(w)
            words.append(w)
    zipf = 1.0 / np.arange(1, n_words + 1) ** 1.1
    zipf /= zipf.sum()
    succ = rs.choice(n_words, size=(n_words, 16), p=zipf).tolist()  # successor slots
    numbers = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
               "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen"]

    out, size = [], 0
    chunk = 1 << 16
    while size < n_bytes:
        u = rs.randint(0, 16, size=chunk).tolist()
        lens = rs.randint(4, 21, size=chunk // 4).tolist()
        ctrl = rs.randint(0, 1000, size=chunk // 4).tolist()
        w = int(rs.randint(n_words))
        ui = 0
        for si in range(len(lens)):
            c = ctrl[si]
            if c < 60:  # a sum
                a, b = c % 10, (c // 10) % 9
                s = f"{numbers[a].capitalize()} plus {numbers[b]} is {numbers[a + b]}."
            else:
                toks = []
                for j in range(lens[si]):
                    w = succ[w][u[ui]]
                    ui += 1
                    toks.append(words[w])
                    if j + 1 < lens[si] and u[ui - 1] == 0:
                        toks[-1] += ","
                s = " ".join(toks).capitalize() + ("?" if c >= 960 else ".")
            sep = "\n\n" if c % 7 == 0 else " "
            out.append(s + sep)
            size += len(s) + len(sep)
            if ui + 21 >= chunk or size >= n_bytes:
                break
    text = "".join(out).encode("ascii")[:n_bytes]
    return np.frombuffer(text, dtype=np.uint8).copy()


class Batches:
    """Step s, rank r -> (inputs, targets) of shape (batch, seqlen), seeded order, no state."""

    def __init__(self, corpus: np.ndarray, seqlen: int, batch: int, rank: int, world: int, seed: int):
        self.win = seqlen + 1
        self.n = len(corpus) // self.win
        self.data = corpus[: self.n * self.win].reshape(self.n, self.win)
        self.batch, self.rank, self.world, self.seed = batch, rank, world, seed
        self.g = batch * world
        if self.n < self.g:
            raise ValueError(f"corpus has {self.n} windows, fewer than one global batch ({self.g})")
        self.per_epoch = self.n // self.g  # steps per epoch (the remainder is dropped)
        self._perm_epoch, self._perm = -1, None

    def get(self, step: int):
        epoch, s = divmod(step, self.per_epoch)
        if epoch != self._perm_epoch:
            self._perm = np.random.RandomState((self.seed * 7919 + epoch) % (2**32)).permutation(self.n)
            self._perm_epoch = epoch
        lo = s * self.g + self.rank * self.batch
        idx = self._perm[lo: lo + self.batch]
        x = torch.from_numpy(self.data[idx].astype(np.int64))
        return x[:, :-1], x[:, 1:]


# ----------------------------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight).to(x.dtype)


def rope_tables(seqlen, head_dim, theta=10000.0):
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    ang = torch.arange(seqlen, dtype=torch.float64)[:, None] * inv[None, :]  # (s, d/2)
    return ang.cos().float(), ang.sin().float()


def apply_rope(x, cos, sin):
    """x: (b, s, h, d), rotate-half convention (as HF LLaMA); fp32 math, result in x.dtype."""
    d2 = x.shape[-1] // 2
    xf = x.float()
    x1, x2 = xf[..., :d2], xf[..., d2:]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype)


class AttnImpl:
    """The attention call, chosen once; q (b,s,hq,d), k/v (b,s,hkv,d), bf16 -> (b,s,hq,d)."""

    def __init__(self, name, schedule="auto", gqa="native", num_ctas=0):
        self.name, self.schedule, self.gqa, self.num_ctas = name, schedule, gqa, num_ctas
        if name.startswith("dash"):
            import dash_attn  # noqa: F401  (fails early and clearly when not installed)
            self.dash = dash_attn

    def __call__(self, q, k, v):
        if self.name in ("dash", "dash_op"):
            # the path (eager Function / custom ops) is chosen at the forward call; the backward follows it
            with self.dash._ops.eager_function(False) if self.name == "dash_op" else contextlib.nullcontext():
                return self.dash.attention(q, k, v, causal=True, schedule=self.schedule, deterministic=True,
                                           num_ctas=self.num_ctas)
        if self.name == "dash_atomic":
            return self.dash.attention(q, k, v, causal=True, schedule="atomic", deterministic=False,
                                       num_ctas=self.num_ctas)
        hq, hkv = q.shape[2], k.shape[2]
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        kw = {}
        if hq != hkv:
            if self.gqa == "native":
                kw["enable_gqa"] = True
            else:  # "expand": the backend refused enable_gqa
                kt = kt.repeat_interleave(hq // hkv, dim=1)
                vt = vt.repeat_interleave(hq // hkv, dim=1)
        if self.name == "sdpa_cudnn":
            from torch.nn.attention import SDPBackend, sdpa_kernel
            ctx = sdpa_kernel(SDPBackend.CUDNN_ATTENTION)
        else:
            ctx = contextlib.nullcontext()
        with ctx:
            o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True, **kw)
        return o.transpose(1, 2)


class Block(nn.Module):
    def __init__(self, cfg, attn):
        super().__init__()
        self.hq, self.hkv, self.hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
        d = cfg["dim"]
        self.attn_norm = RMSNorm(d)
        self.wqkv = nn.Linear(d, (self.hq + 2 * self.hkv) * self.hd, bias=False)
        self.wo = nn.Linear(self.hq * self.hd, d, bias=False)
        self.mlp_norm = RMSNorm(d)
        self.w_gate_up = nn.Linear(d, 2 * cfg["ffn"], bias=False)
        self.w_down = nn.Linear(cfg["ffn"], d, bias=False)
        self.attn = attn

    def forward(self, x, cos, sin, cdtype):
        b, s, _ = x.shape
        qkv = self.wqkv(self.attn_norm(x)).view(b, s, self.hq + 2 * self.hkv, self.hd)
        q, k, v = qkv.split([self.hq, self.hkv, self.hkv], dim=2)
        q = apply_rope(q, cos, sin).to(cdtype)
        k = apply_rope(k, cos, sin).to(cdtype)
        v = v.to(cdtype)
        with torch.autocast(x.device.type, enabled=False):  # inputs are already bf16
            o = self.attn(q, k, v)
        x = x + self.wo(o.reshape(b, s, self.hq * self.hd))
        gate, up = self.w_gate_up(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.w_down(F.silu(gate) * up)


class Llama(nn.Module):
    def __init__(self, cfg, attn, seqlen, cdtype=torch.bfloat16):
        super().__init__()
        self.cdtype = cdtype
        self.embed = nn.Embedding(VOCAB, cfg["dim"])
        self.layers = nn.ModuleList(Block(cfg, attn) for _ in range(cfg["layers"]))
        self.norm = RMSNorm(cfg["dim"])
        self.lm_head = nn.Linear(cfg["dim"], VOCAB, bias=False)
        cos, sin = rope_tables(seqlen, cfg["head_dim"])
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self._init(cfg)

    def _init(self, cfg):
        std = 0.02
        for name, p in self.named_parameters():  # fixed order: registration order
            if p.dim() >= 2:
                s = std / math.sqrt(2 * cfg["layers"]) if name.endswith(("wo.weight", "w_down.weight")) else std
                nn.init.normal_(p, mean=0.0, std=s)

    def forward(self, idx):
        s = idx.shape[1]
        x = self.embed(idx)
        cos, sin = self.cos[:s], self.sin[:s]
        for layer in self.layers:
            x = layer(x, cos, sin, self.cdtype)
        return self.lm_head(self.norm(x))


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------

def deterministic_torch(strict, fill_uninitialized=True):
    """PyTorch's determinism switches (module docstring): deterministic algorithms (strict: an op
    without a deterministic implementation raises; else it warns, once per op, silenced here),
    fill_uninitialized_memory, cuDNN deterministic without autotuning. Returns
    torch.utils.deterministic."""
    torch.use_deterministic_algorithms(True, warn_only=not strict)
    import torch.utils.deterministic as tud
    tud.fill_uninitialized_memory = fill_uninitialized
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    if not strict:
        warnings.filterwarnings("ignore", message=".*deterministic.*")
    return tud


def step_timer(device):
    """(mark, span_ms): mark() records a CUDA event on the current stream (no synchronisation) or
    reads the CPU clock; span_ms(a, b) is the time between two marks, in ms (CUDA: valid once
    the later event has completed)."""
    def mark():
        if device.type == "cuda":
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def span_ms(a, b):
        return a.elapsed_time(b) if device.type == "cuda" else (b - a) * 1e3

    return mark, span_ms


def sha256_state_dict(sd) -> str:
    """SHA-256 over (name, dtype, shape, raw bytes) of every tensor, names sorted."""
    h = hashlib.sha256()
    for name in sorted(sd):
        t = sd[name]
        if not isinstance(t, torch.Tensor):
            continue
        t = t.detach().to("cpu").contiguous()
        h.update(name.encode())
        h.update(str(t.dtype).encode())
        h.update(str(tuple(t.shape)).encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def lr_at(step, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    p = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * min(1.0, p)))


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__)), timeout=10).stdout.strip() or None
    except Exception:
        return None


def versions(device):
    v = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
         "cuda": torch.version.cuda, "commit": git_commit()}
    if device.type == "cuda":
        v["gpu"] = torch.cuda.get_device_name(device)
        v["cudnn"] = torch.backends.cudnn.version()
        try:
            v["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
        except Exception:
            v["nccl"] = None
        try:
            v["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                         capture_output=True, text=True, timeout=20).stdout.split("\n")[0].strip()
        except Exception:
            v["driver"] = None
    try:
        import dash_attn
        v["dash_attn"] = dash_attn.__version__
    except Exception:
        v["dash_attn"] = None
    return v


def probe_sdpa_gqa(impl, cfg, seqlen, device, dtype):
    """Decide enable_gqa vs expanded k/v for an SDPA backend with one fwd+bwd at the run's shape."""
    if cfg["heads"] == cfg["kv_heads"] or not impl.name.startswith("sdpa") or device.type != "cuda":
        return "native"
    g = torch.Generator(device="cpu").manual_seed(0)  # does not touch the global RNG
    q = torch.randn(1, seqlen, cfg["heads"], cfg["head_dim"], generator=g).to(device, dtype).requires_grad_()
    k = torch.randn(1, seqlen, cfg["kv_heads"], cfg["head_dim"], generator=g).to(device, dtype).requires_grad_()
    v = torch.randn(1, seqlen, cfg["kv_heads"], cfg["head_dim"], generator=g).to(device, dtype).requires_grad_()
    try:
        impl(q, k, v).sum().backward()
        torch.cuda.synchronize(device)
        return "native"
    except RuntimeError as e:
        print(f"[train] SDPA ({impl.name}) refused enable_gqa ({str(e).splitlines()[0][:200]}); expanding k/v",
              file=sys.stderr)
        return "expand"


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attn", choices=ATTNS, default="dash")
    p.add_argument("--schedule", default="auto", help="dash_attn backward schedule (--attn dash)")
    p.add_argument("--num-ctas", type=int, default=-1,
                   help="dash_attn backward persistent grid size (0 = one CTA per SM; -1, the default: 0 on one "
                        f"GPU, SMs - {NCCL_SMS} under DDP/FSDP); below the SM count "
                        "leaves SMs to NCCL kernels that overlap the backward under DDP. The bits do not "
                        "depend on it as long as it is at least the schedule's co-resident group (info['min_coresident']; "
                        "a smaller grid falls back to descending)")
    p.add_argument("--dist", choices=("none", "ddp", "fsdp"), default=None,
                   help="default: ddp under torchrun (WORLD_SIZE > 1), else none")
    p.add_argument("--preset", choices=tuple(PRESETS), default="base")
    for k in ("layers", "dim", "heads", "kv_heads", "head_dim", "ffn"):
        p.add_argument("--" + k.replace("_", "-"), type=int, default=None, help=f"override the preset's {k}")
    p.add_argument("--seqlen", type=int, default=2048)
    p.add_argument("--batch", type=int, default=8, help="sequences per GPU per step")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--corpus-mb", type=float, default=None,
                   help="corpus size in MB (default: enough for one pass of the whole run, at least 4 MB, at most 256 MB)")
    p.add_argument("--bucket-mb", type=int, default=25, help="DDP bucket_cap_mb (keep fixed)")
    p.add_argument("--timing-warmup", type=int, default=10, help="steps excluded from tokens/s")
    p.add_argument("--log-every", type=int, default=10, help="steps between loss fetches (one sync)")
    p.add_argument("--profile-steps", type=int, default=0,
                   help="profile this many steps after the timing warm-up (torch.profiler; rank 0 writes "
                        "OUT/profile.txt, GPU time per kernel); tokens/s then includes the profiler's overhead")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--no-fill-uninitialized", action="store_true",
                   help="torch.utils.deterministic.fill_uninitialized_memory = False (faster; the kernels used here do not read uninitialised memory)")
    p.add_argument("--out", default="runs/train")
    p.add_argument("--no-checkpoint", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    cfg = dict(PRESETS[args.preset])
    for k in cfg:
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    if cfg["heads"] % cfg["kv_heads"]:
        p.error("heads must be a multiple of kv_heads")
    if args.attn.startswith("dash") and (cfg["head_dim"] not in (64, 128) or args.device != "cuda"):
        p.error("dash_attn needs --device cuda and head_dim 64 or 128")
    return args, cfg


def write_profile(prof, steps, path, log):
    """GPU time per kernel over the profiled steps (ms per step), largest first, into `path`."""
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = getattr(e, "self_cuda_time_total", 0)
        if t and t > 0:
            rows.append((t / 1000.0 / max(steps, 1), e.count / max(steps, 1), e.key))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    lines = [f"GPU time per step over {steps} profiled steps: {total:.3f} ms (sum of self device time)",
             f"{'ms/step':>9} {'share':>6} {'calls':>6}  name"]
    for ms, calls, name in rows[:40]:
        lines.append(f"{ms:9.3f} {100 * ms / total if total else 0:5.1f}% {calls:6.1f}  {name[:110]}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    log(f"profile ({steps} steps) written to {path}")
    for line in lines[:22]:
        log(line)


def resolve_dist(dist_mode, port, modes="--dist ddp or --dist fsdp"):
    """The --dist mode (None: ddp under torchrun, else none); a distributed mode in one process
    without torchrun gets a world of one (the rendezvous variables set here, MASTER_PORT `port`)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if dist_mode is None:
        dist_mode = "ddp" if world > 1 else "none"
    if dist_mode == "none" and world > 1:
        raise SystemExit(f"WORLD_SIZE > 1: use {modes}")
    if dist_mode != "none" and world == 1 and "RANK" not in os.environ:
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=os.environ.get("MASTER_PORT", str(port)))
    return dist_mode


def setup_device(device_arg, dist_mode, hint):
    """This rank's device (cuda:LOCAL_RANK or cpu) and, for a distributed mode, the process group
    (nccl on GPUs, gloo on the CPU). Returns (device, rank, world)."""
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device_arg == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit(f"no CUDA device ({hint})")
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    rank, world = 0, 1
    if dist_mode != "none":
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo",
                                device_id=device if device.type == "cuda" else None)
        world, rank = dist.get_world_size(), dist.get_rank()
    return device, rank, world


def backward_num_ctas(requested, dist_mode, device):
    """dash's backward grid: `requested` if >= 0, else every SM, or every SM but NCCL_SMS under
    DDP/FSDP: the gradient all-reduce / reduce-scatter kernels run on another stream to overlap
    the backward, and a persistent backward grid on every SM leaves them none until it ends.
    Measured on 2 x H200 (docs/training.md): DDP 414-430k -> 492k tokens/s with 124 of 132 SMs,
    the same weights hash (the bits do not depend on the grid)."""
    if requested >= 0:
        return requested
    sms = torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 0
    return max(sms - NCCL_SMS, 0) if dist_mode != "none" and sms else 0


def main(argv=None):
    args, cfg = parse_args(argv)
    args.dist = resolve_dist(args.dist, 29517)

    # --- determinism settings (see the module docstring) ---
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)  # also seeds every CUDA device
    torch.cuda.manual_seed_all(args.seed)
    strict = args.attn not in ("sdpa_cudnn", "dash_atomic")
    tud = deterministic_torch(strict, fill_uninitialized=not args.no_fill_uninitialized)

    device, rank, world = setup_device(args.device, args.dist, "use --device cpu for a smoke test")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    is_main = rank == 0
    log = (lambda *a: print("[train]", *a, flush=True)) if is_main else (lambda *a: None)

    cdtype = torch.bfloat16
    num_ctas = backward_num_ctas(args.num_ctas, args.dist, device)
    impl = AttnImpl(args.attn, args.schedule, num_ctas=num_ctas)
    impl.gqa = probe_sdpa_gqa(impl, cfg, args.seqlen, device, cdtype)

    # --- model: init on CPU in fp32 from the seed, then move ---
    torch.manual_seed(args.seed)
    model = Llama(cfg, impl, args.seqlen, cdtype)
    n_params = sum(p.numel() for p in model.parameters())
    model.to(device)
    log(f"{args.preset} {cfg} params={n_params / 1e6:.1f}M attn={args.attn} dist={args.dist} world={world} "
        f"batch/gpu={args.batch} seqlen={args.seqlen} steps={args.steps} seed={args.seed}")
    log("env " + " ".join(f"{k}={os.environ.get(k)}" for k in DET_ENV))

    if args.dist == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None,
                    bucket_cap_mb=args.bucket_mb, gradient_as_bucket_view=True,
                    broadcast_buffers=False, find_unused_parameters=False)
        core = model.module
    elif args.dist == "fsdp":
        try:
            from torch.distributed.fsdp import fully_shard
        except ImportError:  # older 2.x
            from torch.distributed._composable.fsdp import fully_shard
        for layer in model.layers:
            fully_shard(layer)
        fully_shard(model)
        core = model
    else:
        core = model

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8, foreach=True)

    # --- data ---
    need = args.steps * args.batch * world * (args.seqlen + 1)
    corpus_bytes = int(args.corpus_mb * 1e6) if args.corpus_mb else min(max(need, 4_000_000), 256_000_000)
    t0 = time.time()
    corpus = make_corpus(corpus_bytes, args.seed)
    data = Batches(corpus, args.seqlen, args.batch, rank, world, args.seed)
    log(f"corpus {len(corpus) / 1e6:.1f} MB in {time.time() - t0:.1f}s, {data.n} windows, "
        f"{data.per_epoch} steps/epoch, sha256 {hashlib.sha256(corpus.tobytes()).hexdigest()[:16]}")

    os.makedirs(args.out, exist_ok=True) if is_main else None
    loss_f = open(os.path.join(args.out, "losses.jsonl"), "w") if is_main else None
    bar = None
    if is_main and not args.no_progress:
        try:
            from tqdm import tqdm
            bar = tqdm(total=args.steps, desc=f"{args.attn}/{args.dist}x{world}", unit="step", dynamic_ncols=True)
        except ImportError:
            pass

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    tokens_per_step = args.batch * world * args.seqlen
    pending = []  # (step, loss tensor, grad-norm tensor, lr)
    last_loss = float("nan")
    t_start, step_start = None, None
    bwd_info = None
    model.train()

    def flush():
        nonlocal last_loss
        if not pending:
            return
        losses = torch.stack([l for _, l, _, _ in pending]).float()
        if world > 1:  # global mean loss (a sum of `world` fp32 values: deterministic for a fixed world)
            dist.all_reduce(losses)
            losses = losses / world
        gn = torch.stack([g for _, _, g, _ in pending]).float().tolist()
        for (s, _, _, lr), l, g in zip(pending, losses.tolist(), gn):
            if loss_f is not None:
                loss_f.write(json.dumps({"step": s, "loss": l, "grad_norm": g, "lr": lr}) + "\n")
            last_loss = l
        if loss_f is not None:
            loss_f.flush()
        if bar is not None:
            bar.update(len(pending))
            bar.set_postfix(loss=f"{last_loss:.4f}")
        elif is_main:
            log(f"step {pending[-1][0] + 1}/{args.steps} loss {last_loss:.4f}")
        pending.clear()

    # Per-step times of the timed steps: CUDA events on the stream (no sync inside the loop) or
    # wall time on the CPU. Their median gives tokens_per_s_median, which one slow step (a host
    # hiccup, another process on the machine) does not move; tokens_per_s is over the whole span.
    mark, span_ms = step_timer(device)

    step_marks = []
    prof = None
    prof_first = min(args.timing_warmup, args.steps - 1)
    for step in range(args.steps):
        if step == prof_first and args.profile_steps > 0 and is_main:
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                      torch.profiler.ProfilerActivity.CUDA])
            prof.start()
        if prof is not None and step == prof_first + args.profile_steps:
            sync()
            prof.stop()
            write_profile(prof, args.profile_steps, os.path.join(args.out, "profile.txt"), log)
            prof = None
        if step == min(args.timing_warmup, args.steps - 1):
            flush()
            sync()
            t_start, step_start = time.perf_counter(), step
        if t_start is not None:
            step_marks.append(mark())
        lr = lr_at(step, args)
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = data.get(step)
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with torch.autocast(device.type, dtype=cdtype):
            logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), y.reshape(-1))
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip, foreach=True)
        if hasattr(gnorm, "full_tensor"):  # FSDP2: a DTensor
            gnorm = gnorm.full_tensor()
        opt.step()
        opt.zero_grad(set_to_none=True)
        pending.append((step, loss.detach(), gnorm.detach(), lr))
        if bwd_info is None and args.attn.startswith("dash"):
            try:
                bwd_info = impl.dash.last_bwd_info()
            except Exception as e:  # informational only
                bwd_info = {"error": str(e)}
        if len(pending) >= args.log_every:
            flush()
    step_marks.append(mark())
    flush()
    sync()
    if prof is not None:  # fewer steps left than --profile-steps
        prof.stop()
        write_profile(prof, args.steps - prof_first, os.path.join(args.out, "profile.txt"), log)
    elapsed = time.perf_counter() - t_start
    timed_steps = args.steps - step_start
    tok_s = timed_steps * tokens_per_step / elapsed if elapsed > 0 else float("nan")
    step_ms = [span_ms(a, b) for a, b in zip(step_marks, step_marks[1:])]
    step_ms_median = statistics.median(step_ms) if step_ms else float("nan")
    tok_s_median = tokens_per_step / (step_ms_median / 1e3) if step_ms and step_ms_median > 0 else float("nan")
    if bar is not None:
        bar.close()

    # --- final weights: hash and checkpoint ---
    if args.dist == "fsdp":
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
        sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    else:
        sd = {k: v.detach().cpu() for k, v in core.state_dict().items()}
    result = None
    if is_main:
        digest = sha256_state_dict(sd)
        peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
        result = {
            "weights_sha256": digest, "tokens_per_s": tok_s, "tokens_per_s_per_gpu": tok_s / world,
            "timed_steps": timed_steps, "elapsed_s": elapsed, "final_loss": last_loss,
            "tokens_per_s_median": tok_s_median, "step_ms_median": step_ms_median,
            "step_ms_min": min(step_ms) if step_ms else None, "step_ms_max": max(step_ms) if step_ms else None,
            "params": n_params, "model": cfg, "world_size": world, "peak_mem_gib": peak,
            "attn": args.attn, "num_ctas": num_ctas, "sdpa_gqa": impl.gqa if args.attn.startswith("sdpa") else None,
            "dash_bwd_info": bwd_info, "args": vars(args), "env": {k: os.environ.get(k) for k in DET_ENV},
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
            "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
            "fill_uninitialized_memory": tud.fill_uninitialized_memory,
            "versions": versions(device),
        }
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(result, f, indent=1, default=str)
        if not args.no_checkpoint:
            ckpt = {"model": sd, "step": args.steps, "config": cfg, "args": vars(args), "weights_sha256": digest}
            if args.dist != "fsdp":
                ckpt["optimizer"] = opt.state_dict()
            torch.save(ckpt, os.path.join(args.out, "checkpoint.pt"))
        loss_f.close()
        print(f"tokens_per_s {tok_s:.0f}  ({world} x {device.type}, {timed_steps} timed steps, {elapsed:.1f}s)")
        print(f"tokens_per_s_median {tok_s_median:.0f}  (median step {step_ms_median:.2f} ms, "
              f"min {min(step_ms) if step_ms else float('nan'):.2f}, max {max(step_ms) if step_ms else float('nan'):.2f})")
        print(f"final_loss {last_loss:.6f}")
        print(f"weights_sha256 {digest}", flush=True)
    if args.dist != "none":
        dist.barrier()
        dist.destroy_process_group()
    return result


if __name__ == "__main__":
    main()
