"""torch.library custom ops ``dash_attn::fwd`` and ``dash_attn::bwd``.

The real implementations call the compiled extension ``dash_attn._C`` (imported lazily, on the
first real call); the fake implementations (used by FakeTensorMode, torch.compile tracing and
meta tensors) only describe output shapes and dtypes and never touch the extension, so this
module imports and traces on a machine without a GPU or without the compiled extension.
"""
from __future__ import annotations

import contextlib
import importlib
import os
from typing import Tuple

import torch

__all__ = ["fwd", "bwd", "extension", "has_extension", "kernel_layout", "eager_function"]

_EXT = None
_EXT_ERROR = None


_ERRORS = {"ValueError": ValueError, "TypeError": TypeError, "RuntimeError": RuntimeError}


class _Extension:
    """``dash_attn._C`` with its error tuples turned into exceptions.

    The binding never throws a C++ exception (one thrown through pybind11 crashed the
    interpreter with torch 2.11): a failing call returns ``("__dash_error__", kind, message)``
    and this wrapper raises ``kind(message)``.
    """

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        # Only called for names not yet in the instance __dict__: the wrapper of a function is
        # built once and stored there, so later lookups (two per forward + backward) are plain
        # attribute reads instead of a getattr on the module and a new closure each time.
        fn = getattr(self._module, name)
        if not callable(fn):
            return fn

        def call(*args, **kwargs):
            r = fn(*args, **kwargs)
            if isinstance(r, tuple) and len(r) == 3 and isinstance(r[0], str) and r[0] == "__dash_error__":
                raise _ERRORS.get(r[1], RuntimeError)(r[2])
            return r

        call.__name__ = name
        call.__doc__ = fn.__doc__
        self.__dict__[name] = call  # two threads racing here build equal wrappers: either one is fine
        return call


def extension():
    """The compiled extension ``dash_attn._C`` (ImportError with a hint if missing), wrapped so
    that its errors raise ValueError / TypeError / RuntimeError."""
    global _EXT, _EXT_ERROR
    if _EXT is None:
        try:
            _EXT = _Extension(importlib.import_module("dash_attn._C"))
        except ImportError as e:  # not built (CPU-only install) or built for another torch
            _EXT_ERROR = e
            raise ImportError(
                "dash_attn: the compiled extension dash_attn._C is not available "
                f"({e}). Build it on a machine with nvcc 13 and PyTorch: "
                "`pip install --no-build-isolation .` from the dash-attn repo root. "
                "Argument checks and fake/meta tensors work without it; running the kernels does not."
            ) from e
    return _EXT


def has_extension() -> bool:
    """True when the compiled extension imports."""
    try:
        extension()
        return True
    except ImportError:
        return False


def kernel_layout(t: torch.Tensor, check_offset: bool = True) -> torch.Tensor:
    """``t`` itself when the kernels accept its layout, else a contiguous copy.

    The kernels read (batch, seqlen, heads, head_dim) tensors with any strides on the first
    three dimensions that are positive multiples of 8 elements (16 bytes; a size-1 dimension's
    stride does not matter), a contiguous head_dim, and a 16-byte aligned start (storage offset
    a multiple of 8 elements; the allocator aligns the storage itself).

    check_offset=False skips the storage-offset test, which torch.compile cannot trace (Dynamo
    does not put storage_offset() in a graph): the traced path checks strides only and the
    op's real implementation, which runs eagerly, checks everything.
    """
    # Fast path, the common case (e.g. q/k/v views of a projection, o's gradient): a non-empty
    # contiguous tensor whose head_dim is a multiple of 8 has stride 1 on head_dim and strides
    # on the other dimensions that are products of later sizes including head_dim, so positive
    # multiples of 8: the loop below would accept it. About 0.4 us instead of 1.9 us on the host.
    # (numel() > 0: torch calls every empty tensor contiguous, whatever its strides.)
    if (
        t.is_contiguous()
        and t.shape[-1] % 8 == 0
        and t.numel() > 0
        and (not check_offset or t.storage_offset() % 8 == 0)
    ):
        return t
    ok = t.stride(-1) == 1
    if ok:
        for d in range(t.dim() - 1):
            if t.shape[d] > 1 and (t.stride(d) <= 0 or t.stride(d) % 8 != 0):
                ok = False
                break
    if ok and check_offset:
        ok = t.storage_offset() % 8 == 0
    if ok:
        return t
    # clone, not contiguous(): a contiguous tensor at a misaligned storage offset needs a copy too.
    return t.clone(memory_format=torch.contiguous_format)


# ---- forward ----------------------------------------------------------------------------------
# bwd_schedule / bwd_num_ctas are not used by the forward; they ride along so that the autograd
# formula (setup_context sees only the op's inputs and outputs) knows how to run the backward.
@torch.library.custom_op("dash_attn::fwd", mutates_args=(), device_types="cuda")
def fwd(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool,
    softmax_scale: float,
    bwd_schedule: str,
    bwd_num_ctas: int,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(o, lse): o (batch, seqlen_q, heads_q, head_dim) contiguous, lse (batch, heads_q,
    seqlen_q) float32 natural log (-inf for a row that sees no key). softmax_scale 0 selects
    1/sqrt(head_dim)."""
    return _run_fwd(q, k, v, causal, softmax_scale)


def _run_fwd(q, k, v, causal, softmax_scale):
    """The forward through the extension (the real implementation of dash_attn::fwd, and the
    eager path's)."""
    o, lse = extension().fwd(kernel_layout(q), kernel_layout(k), kernel_layout(v), causal, softmax_scale)
    return o, lse


@fwd.register_fake
def _fwd_fake(q, k, v, causal, softmax_scale, bwd_schedule, bwd_num_ctas):
    b, sq, hq, _ = q.shape
    o = q.new_empty(q.shape)  # contiguous, like the real output
    lse = q.new_empty((b, hq, sq), dtype=torch.float32)
    return o, lse


# ---- backward ---------------------------------------------------------------------------------
@torch.library.custom_op("dash_attn::bwd", mutates_args=(), device_types="cuda")
def bwd(
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    lse: torch.Tensor,
    causal: bool,
    softmax_scale: float,
    schedule: str,
    num_ctas: int,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv), contiguous, with the dtypes and shapes of q, k, v. schedule is a concrete
    name or "auto" (resolved by the planner); "atomic" is non-deterministic. num_ctas 0 sizes the
    persistent grid from the device."""
    return _run_bwd(dout, q, k, v, o, lse, causal, softmax_scale, schedule, num_ctas)


def _run_bwd(dout, q, k, v, o, lse, causal, softmax_scale, schedule, num_ctas):
    """The backward through the extension (the real implementation of dash_attn::bwd, and the
    eager path's): (dq, dk, dv)."""
    return tuple(
        extension().bwd(
            kernel_layout(dout),
            kernel_layout(q),
            kernel_layout(k),
            kernel_layout(v),
            kernel_layout(o),
            lse.contiguous(),
            causal,
            softmax_scale,
            schedule,
            num_ctas,
        )
    )


@bwd.register_fake
def _bwd_fake(dout, q, k, v, o, lse, causal, softmax_scale, schedule, num_ctas):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


# ---- autograd ---------------------------------------------------------------------------------
def _setup_context(ctx, inputs, output):
    q, k, v, causal, softmax_scale, bwd_schedule, bwd_num_ctas = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse)
    ctx.causal = causal
    ctx.softmax_scale = softmax_scale
    ctx.bwd_schedule = bwd_schedule
    ctx.bwd_num_ctas = bwd_num_ctas


def _backward(ctx, grad_o, grad_lse):
    # lse is an internal output (dash_attn.attention returns o only): its gradient is ignored.
    q, k, v, o, lse = ctx.saved_tensors
    if grad_o is None:
        return None, None, None, None, None, None, None
    dout = kernel_layout(grad_o, check_offset=False)  # e.g. the stride-0 gradient of o.sum()
    dq, dk, dv = bwd(dout, q, k, v, o, lse, ctx.causal, ctx.softmax_scale, ctx.bwd_schedule, ctx.bwd_num_ctas)
    return dq, dk, dv, None, None, None, None


fwd.register_autograd(_backward, setup_context=_setup_context)


# ---- the eager path: one autograd.Function, without torch.library's dispatch ----------------------
# torch.library.custom_op runs its autograd wrapper and dispatch in Python on every call. Measured
# on the H200 (bench/host_overhead.py, b=1 s=128 h=6/2 d=128, host-bound; docs/perf.md v10): one
# forward + backward took 446.5 us through the custom ops, 248.9 us through _EagerAttention,
# 253.5 us through cuDNN SDPA. So dash_attn.attention on plain CUDA tensors outside torch.compile
# goes through _EagerAttention by default: the same extension calls with the same arguments, the
# same kernels and bits (tests/python/test_gpu.py::test_eager_function_same_bits_as_custom_op);
# torch.compile, FakeTensor, meta tensors and tensor subclasses (DTensor, ...) keep the custom ops.
# DASH_EAGER_FUNCTION=0 (or `with eager_function(False):`) uses the custom ops everywhere.
_EAGER_FN = os.environ.get("DASH_EAGER_FUNCTION") != "0"


@contextlib.contextmanager
def eager_function(enabled: bool = True):
    """Within the block, dash_attn.attention on plain CUDA tensors uses the eager autograd.Function
    path (enabled=True, the default) or the custom ops (False); see DASH_EAGER_FUNCTION above. Not
    thread-local: the setting is process-wide while it lasts."""
    global _EAGER_FN
    old, _EAGER_FN = _EAGER_FN, bool(enabled)
    try:
        yield
    finally:
        _EAGER_FN = old


def eager_function_applies(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> bool:
    """Whether dash_attn.attention takes the eager path for these inputs now."""
    return (
        _EAGER_FN
        and not torch.compiler.is_compiling()
        and type(q) is torch.Tensor and type(k) is torch.Tensor and type(v) is torch.Tensor
        and q.is_cuda
    )


class _EagerAttention(torch.autograd.Function):
    """dash_attn::fwd / dash_attn::bwd's real implementations and autograd formula, as one
    torch.autograd.Function (the eager path; see DASH_EAGER_FUNCTION).

    Unlike the custom ops' backward, which can receive arbitrary tensors and checks them all
    (_run_bwd), this backward receives what this forward saved: q, k, v already in a kernel
    layout, and o and lse as the extension made them (o contiguous, lse contiguous float32, both
    at storage offset 0), so only grad_o is laid out again. Same extension calls with equal
    arguments as the custom ops (so the same bits), with 5 fewer layout checks per call.
    """

    @staticmethod
    def forward(ctx, q, k, v, causal, softmax_scale, bwd_schedule, bwd_num_ctas):
        # Laid out once, here, and saved as laid out. A tensor that needed a copy keeps its copy
        # alive until the backward, as on the custom-op route (which saves its laid-out inputs),
        # instead of being copied a second time there; the usual q/k/v need no copy.
        q, k, v = kernel_layout(q), kernel_layout(k), kernel_layout(v)
        o, lse = extension().fwd(q, k, v, causal, softmax_scale)
        ctx.save_for_backward(q, k, v, o, lse)
        # One tuple instead of four ctx attributes: the backward's trailing arguments, in order.
        ctx.bwd_args = (causal, softmax_scale, bwd_schedule, bwd_num_ctas)
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, grad_o, grad_lse):
        # once_differentiable costs about 1.5 us per call (a torch.no_grad() block) and does
        # nothing else when grad mode is already off, as in every backward without
        # create_graph=True: it wraps only the create_graph case, where it makes a double
        # backward raise.
        if torch.is_grad_enabled():
            return _eager_backward_once_differentiable(ctx, grad_o, grad_lse)
        return _eager_backward(ctx, grad_o, grad_lse)


def _eager_backward(ctx, grad_o, grad_lse):
    """_EagerAttention's backward."""
    q, k, v, o, lse = ctx.saved_tensors
    if grad_o is None:
        return None, None, None, None, None, None, None
    # With the storage-offset test: the extension needs a 16-byte aligned start. (This is what
    # the custom-op route does in two steps, kernel_layout(grad_o, check_offset=False) in
    # _backward, then kernel_layout in _run_bwd; e.g. the stride-0 gradient of o.sum() is
    # copied.)
    dq, dk, dv = extension().bwd(kernel_layout(grad_o), q, k, v, o, lse, *ctx.bwd_args)
    return dq, dk, dv, None, None, None, None


_eager_backward_once_differentiable = torch.autograd.function.once_differentiable(_eager_backward)
