"""dash_attn: deterministic attention for Hopper (sm_90a), forward and backward, for PyTorch.

    import torch, dash_attn
    q = torch.randn(2, 4096, 32, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(2, 4096, 8, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn_like(k, requires_grad=True)
    o = dash_attn.attention(q, k, v, causal=True, deterministic=True)  # (2, 4096, 32, 128)
    o.sum().backward()                                                   # bitwise-reproducible grads

Layout (batch, seqlen, heads, head_dim), as flash_attn_func; attention_sdpa_layout takes and
returns SDPA's (batch, heads, seqlen, head_dim). See docs/python.md.
"""
from __future__ import annotations

import math
import warnings
from typing import Optional

import torch

from . import _ops
from ._ops import has_extension

__version__ = "0.1.0"

__all__ = [
    "attention",
    "attention_sdpa_layout",
    "SCHEDULES",
    "DETERMINISTIC_SCHEDULES",
    "schedule_names",
    "last_bwd_info",
    "has_extension",
]

# Names the backward accepts (the C++ API's dash::schedule_name, checked against the extension
# by the GPU tests). "atomic" is the non-deterministic mode.
SCHEDULES = ("auto", "ascending", "spt", "descending", "shift", "symmetric_shift", "atomic")
DETERMINISTIC_SCHEDULES = tuple(s for s in SCHEDULES if s != "atomic")
SUPPORTED_HEAD_DIMS = (64, 128)
SUPPORTED_DTYPES = (torch.bfloat16, torch.float16)


def schedule_names() -> list:
    """The schedule names the compiled extension knows (needs the extension)."""
    return list(_ops.extension().schedule_names())


def last_bwd_info() -> Optional[dict]:
    """What the last backward launch in this process did: a dict with the concrete ``schedule``
    that ran (``auto`` resolved, or ``descending`` after a fallback), ``num_ctas``,
    ``fell_back``, ``note``, ``dispatch``, ``block_m``, ``block_n``, ``num_tasks``,
    ``split_tasks`` / ``split_pieces`` (the last-wave split: tasks run as that many pieces each; 0 /
    1: none), ``min_coresident``, ``head_block``, ``dq_writers``, ``dq_stage_bufs`` (the sm90 backward's dQ
    staging buffers: 2, or 1 with 80-row tiles at head_dim 128 but for full-mask shift), ``producer_regs`` (the sm90 backward's
    producer setmaxnreg: 40, or 24 with 80-row Q tiles at head_dim 128 or DASH_BWD_SM90_PRODUCER24=1; 0 on the sm80 kernel),
    ``split_rank`` (the split dQ rank variant ran: shift / symmetric shift), ``writer_rank``
    (the dQ writer computed full-mask shift's closed-form rank), ``pdl`` (the main kernel and the
    postprocess ran as programmatic dependents), ``post_poll`` (the postprocess converted each dQ
    tile as its chain completed), ``post_queue`` (its blocks took the tiles in the order their chains
    completed), ``pre_vec`` (the preprocess read O / dO with 16-byte loads), ``atomic_shift`` (atomic
    ran shift's task order and visits without the chain, DASH_BWD_ATOMIC_SHIFT=1); None
    before the first backward. Needs
    the extension."""
    return _ops.extension().last_bwd_info()


def _check_inputs(fn: str, q, k, v) -> None:
    # Runs on every call (12 layers of a training step each run it once): the checks and their
    # order are the obvious ones, written to read each tensor property once, e.g. `t.shape`
    # into a local (each `t.shape` builds a torch.Size) and `is_cuda`/`is_meta` instead of
    # `t.device.type` (a device object and a string per tensor); t.device only in messages.
    # About 7.7 us -> 4 us per call on the host (meta tensors).
    names = ("q", "k", "v")
    tensors = (q, k, v)
    for name, t in zip(names, tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{fn}: {name} must be a torch.Tensor, got {type(t).__name__}")
    for name, t in zip(names, tensors):
        # "meta" is accepted for shape inference (the fake implementation runs there).
        if not (t.is_cuda or t.is_meta):
            raise ValueError(
                f"{fn}: {name} must be a CUDA tensor, got device '{t.device}' (the kernels run on sm_90a GPUs)"
            )
    q_device = q.device
    if k.device != q_device or v.device != q_device:
        raise ValueError(
            f"{fn}: q, k, v must be on one device, got q on {q.device}, k on {k.device}, v on {v.device}"
        )
    q_dtype = q.dtype
    if q_dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{fn}: q must be torch.bfloat16 or torch.float16, got {q.dtype}")
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q_dtype:
            raise TypeError(f"{fn}: {name} has dtype {t.dtype} but q has {q.dtype}: q, k, v must have one dtype")
    for name, t in zip(names, tensors):
        if t.dim() != 4:
            raise ValueError(
                f"{fn}: {name} must be 4-D (batch, seqlen, heads, head_dim), got shape {tuple(t.shape)}"
            )
    qs, ks, vs = q.shape, k.shape, v.shape
    if ks != vs:  # torch.Size is a tuple: the same comparison as on tuple(...)
        raise ValueError(f"{fn}: k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}")
    if ks[0] != qs[0]:
        raise ValueError(f"{fn}: batch of k/v ({k.shape[0]}) differs from batch of q ({q.shape[0]})")
    if ks[3] != qs[3]:
        raise ValueError(f"{fn}: head_dim of k/v ({k.shape[3]}) differs from head_dim of q ({q.shape[3]})")
    if qs[3] not in SUPPORTED_HEAD_DIMS:
        raise ValueError(f"{fn}: head_dim {q.shape[3]} is not supported (supported: 64, 128)")
    for name, s in zip(names, (qs, ks, vs)):
        if s[0] == 0 or s[1] == 0 or s[2] == 0:
            raise ValueError(f"{fn}: {name} must be non-empty (batch, seqlen, heads >= 1), got shape {tuple(s)}")
    if qs[2] % ks[2] != 0:
        raise ValueError(
            f"{fn}: heads of q ({q.shape[2]}) must be a multiple of heads of k/v ({k.shape[2]}) (GQA/MQA)"
        )
    for name, t in zip(names, tensors):
        if t.stride(-1) != 1:
            raise ValueError(
                f"{fn}: {name} must have a contiguous last dimension (head_dim stride 1), got strides "
                f"{tuple(t.stride())}; call .contiguous() first"
            )


def _resolve_scale(fn: str, softmax_scale) -> float:
    if softmax_scale is None:
        return 0.0  # the kernels' default, 1/sqrt(head_dim)
    if isinstance(softmax_scale, bool) or not isinstance(softmax_scale, (int, float)):
        raise TypeError(f"{fn}: softmax_scale must be a float or None, got {type(softmax_scale).__name__}")
    s = float(softmax_scale)
    if not math.isfinite(s) or s <= 0.0:
        raise ValueError(f"{fn}: softmax_scale must be finite and > 0 (None = 1/sqrt(head_dim)), got {softmax_scale}")
    return s


def _resolve_schedule(fn: str, schedule, deterministic) -> str:
    if not isinstance(schedule, str) or schedule not in SCHEDULES:
        raise ValueError(f"{fn}: schedule must be one of {', '.join(SCHEDULES)}; got {schedule!r}")
    if deterministic is not None and not isinstance(deterministic, bool):
        raise TypeError(f"{fn}: deterministic must be True, False or None, got {type(deterministic).__name__}")
    from_global = deterministic is None
    if from_global:
        deterministic = torch.are_deterministic_algorithms_enabled()
    if deterministic:
        if schedule == "atomic":
            msg = (
                f"{fn}: schedule='atomic' is non-deterministic (unordered dQ additions) but deterministic "
                "mode is on (deterministic=True or torch.use_deterministic_algorithms(True)); use "
                f"schedule='auto' or one of {', '.join(DETERMINISTIC_SCHEDULES)}"
            )
            # torch.use_deterministic_algorithms(True, warn_only=True): warn, as torch's own ops do.
            # (The warn-only flag is read outside torch.compile only: Dynamo cannot trace it.)
            if (
                from_global
                and not torch.compiler.is_compiling()
                and torch.is_deterministic_algorithms_warn_only_enabled()
            ):
                warnings.warn(msg)
            else:
                raise ValueError(msg)
        return schedule
    # Non-deterministic mode: "auto" takes the fastest mode, the unordered (atomic) dQ adds.
    return "atomic" if schedule == "auto" else schedule


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    softmax_scale: Optional[float] = None,
    schedule: str = "auto",
    deterministic: Optional[bool] = None,
    *,
    num_ctas: int = 0,
) -> torch.Tensor:
    """softmax(q k^T * softmax_scale [+ causal mask]) v, differentiable in q, k, v.

    q: (batch, seqlen_q, heads_q, head_dim); k, v: (batch, seqlen_k, heads_kv, head_dim), CUDA,
    all bfloat16 or all float16, head_dim 64 or 128, heads_q a multiple of heads_kv (GQA/MQA).
    head_dim must be contiguous (stride 1); other strides are used as they are when they are
    multiples of 8 elements, else the tensor is copied.

    causal: bottom-right aligned when seqlen_q != seqlen_k (query row i sees key j iff
    j <= i + seqlen_k - seqlen_q, as flash_attn_func); a query row that sees no key gets 0.
    softmax_scale: None means 1/sqrt(head_dim).
    schedule: the backward's execution/accumulation order: "auto" (the planner picks one),
    "ascending", "spt", "descending", "shift", "symmetric_shift" (all deterministic) or
    "atomic" (non-deterministic, unordered dQ adds).
    deterministic: None follows torch.are_deterministic_algorithms_enabled(). When False,
    schedule "auto" runs "atomic"; when True, "atomic" raises ValueError.
    num_ctas: persistent grid size of the backward (0 = sized from the device).

    Returns o, contiguous (batch, seqlen_q, heads_q, head_dim), dtype of q.
    """
    return _attention("dash_attn.attention", q, k, v, causal, softmax_scale, schedule, deterministic, num_ctas)


def _attention(fn, q, k, v, causal, softmax_scale, schedule, deterministic, num_ctas):
    _check_inputs(fn, q, k, v)
    scale = _resolve_scale(fn, softmax_scale)
    sched = _resolve_schedule(fn, schedule, deterministic)
    if isinstance(num_ctas, bool) or not isinstance(num_ctas, int) or num_ctas < 0:
        raise ValueError(f"{fn}: num_ctas must be an int >= 0 (0 = sized from the device), got {num_ctas!r}")
    if _ops.eager_function_applies(q, k, v):  # the default eager path (DASH_EAGER_FUNCTION=0: custom ops)
        o, _ = _ops._EagerAttention.apply(q, k, v, bool(causal), scale, sched, num_ctas)
        return o
    o, _ = _ops.fwd(
        _ops.kernel_layout(q, check_offset=False),
        _ops.kernel_layout(k, check_offset=False),
        _ops.kernel_layout(v, check_offset=False),
        bool(causal),
        scale,
        sched,
        num_ctas,
    )
    return o


def attention_sdpa_layout(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    softmax_scale: Optional[float] = None,
    schedule: str = "auto",
    deterministic: Optional[bool] = None,
    *,
    num_ctas: int = 0,
) -> torch.Tensor:
    """attention() for torch.nn.functional.scaled_dot_product_attention's layout.

    q: (batch, heads_q, seqlen_q, head_dim); k, v: (batch, heads_kv, seqlen_k, head_dim); returns
    (batch, heads_q, seqlen_q, head_dim) (a transposed view of a contiguous (b, s, h, d) tensor).
    No copy is made for the usual contiguous SDPA tensors: the kernels read the transposed
    strides directly. Note: causal is bottom-right aligned when seqlen_q != seqlen_k, whereas
    SDPA's is_causal is top-left aligned (the same for seqlen_q == seqlen_k). GQA does not need
    SDPA's enable_gqa: heads_q a multiple of heads_kv is always accepted.
    """
    fn = "dash_attn.attention_sdpa_layout"
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{fn}: {name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{fn}: {name} must be 4-D (batch, heads, seqlen, head_dim), got shape {tuple(t.shape)}")
    # Shapes in error messages are those of the transposed (batch, seqlen, heads, head_dim) views.
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    o = _attention(fn, qt, kt, vt, causal, softmax_scale, schedule, deterministic, num_ctas)
    return o.transpose(1, 2)
