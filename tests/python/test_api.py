"""Tests that run without a GPU: argument checks, schedule resolution, the fake (meta)
implementations, autograd wiring and torch.compile(fullgraph=True) tracing on meta tensors."""
import os
import subprocess
import sys
import warnings

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import dash_attn
from dash_attn import _ops

BF16, FP16 = torch.bfloat16, torch.float16


def meta(*shape, dtype=BF16, requires_grad=False):
    return torch.empty(*shape, device="meta", dtype=dtype, requires_grad=requires_grad)


def qkv_meta(b=2, sq=128, sk=128, hq=8, hkv=2, d=64, dtype=BF16, requires_grad=False):
    return (
        meta(b, sq, hq, d, dtype=dtype, requires_grad=requires_grad),
        meta(b, sk, hkv, d, dtype=dtype, requires_grad=requires_grad),
        meta(b, sk, hkv, d, dtype=dtype, requires_grad=requires_grad),
    )


# ---- import ----------------------------------------------------------------------------------
def test_import_does_not_load_extension():
    code = "import sys, dash_attn; assert 'dash_attn._C' not in sys.modules; print(dash_attn.SCHEDULES)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_ops_registered():
    assert "dash_attn::fwd" in str(torch.ops.dash_attn.fwd.default._schema)
    assert "dash_attn::bwd" in str(torch.ops.dash_attn.bwd.default._schema)
    assert isinstance(dash_attn.has_extension(), bool)


# ---- argument checks on CPU tensors ------------------------------------------------------------
def test_cpu_tensors_rejected():
    q = torch.randn(2, 16, 4, 64, dtype=BF16)
    with pytest.raises(ValueError, match=r"q must be a CUDA tensor.*cpu"):
        dash_attn.attention(q, q, q)
    with pytest.raises(ValueError, match=r"must be a CUDA tensor"):
        dash_attn.attention_sdpa_layout(q, q, q)


def test_mixed_devices_rejected():
    q = meta(2, 16, 4, 64)
    k = torch.randn(2, 16, 4, 64, dtype=BF16)
    with pytest.raises(ValueError, match=r"k must be a CUDA tensor"):
        dash_attn.attention(q, k, q)


@pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.device_count() < 2,
                    reason="fake cuda:1 tensors need a second GPU once CUDA is initialised")
def test_mixed_cuda_devices_rejected_fake():
    with FakeTensorMode():
        q = torch.empty(2, 16, 4, 64, dtype=BF16, device="cuda:0")
        k = torch.empty(2, 16, 4, 64, dtype=BF16, device="cuda:1")
        with pytest.raises(ValueError, match=r"one device"):
            dash_attn.attention(q, k, k)


def test_non_tensor_rejected():
    q = meta(2, 16, 4, 64)
    with pytest.raises(TypeError, match=r"k must be a torch.Tensor"):
        dash_attn.attention(q, [1, 2], q)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int8])
def test_bad_dtype(dtype):
    q = meta(2, 16, 4, 64, dtype=dtype)
    with pytest.raises(TypeError, match=r"q must be torch.bfloat16 or torch.float16"):
        dash_attn.attention(q, q, q)


def test_mixed_dtype():
    q, k, v = qkv_meta()
    with pytest.raises(TypeError, match=r"v has dtype torch.float16 but q has torch.bfloat16"):
        dash_attn.attention(q, k, v.to(FP16))


def test_bad_rank():
    q, k, v = qkv_meta()
    with pytest.raises(ValueError, match=r"k must be 4-D"):
        dash_attn.attention(q, k[0], v)
    with pytest.raises(ValueError, match=r"q must be 4-D \(batch, heads, seqlen, head_dim\)"):
        dash_attn.attention_sdpa_layout(q[0], k, v)


@pytest.mark.parametrize("d", [32, 96, 256])
def test_bad_head_dim(d):
    q, k, v = qkv_meta(d=d)
    with pytest.raises(ValueError, match=rf"head_dim {d} is not supported"):
        dash_attn.attention(q, k, v)


def test_head_dim_mismatch():
    q, _, _ = qkv_meta(d=128)
    _, k, v = qkv_meta(d=64)
    with pytest.raises(ValueError, match=r"head_dim of k/v \(64\) differs"):
        dash_attn.attention(q, k, v)


def test_heads_not_dividing():
    q, k, v = qkv_meta(hq=6, hkv=4)
    with pytest.raises(ValueError, match=r"heads of q \(6\) must be a multiple of heads of k/v \(4\)"):
        dash_attn.attention(q, k, v)


def test_shape_mismatches():
    q, k, v = qkv_meta(sk=100)
    with pytest.raises(ValueError, match=r"k and v must have the same shape"):
        dash_attn.attention(q, k, v[:, :50])
    with pytest.raises(ValueError, match=r"batch of k/v"):
        dash_attn.attention(q, k[:1], v[:1])
    with pytest.raises(ValueError, match=r"non-empty"):
        dash_attn.attention(q[:, :0], k, v)


def test_last_dim_stride():
    q, k, v = qkv_meta(d=64)
    wide = meta(2, 128, 2, 128)
    k_strided = wide[..., ::2]  # head_dim 64 with stride 2
    assert k_strided.shape == k.shape
    with pytest.raises(ValueError, match=r"k must have a contiguous last dimension"):
        dash_attn.attention(q, k_strided, v)


def test_softmax_scale_checks():
    q, k, v = qkv_meta()
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"softmax_scale"):
            dash_attn.attention(q, k, v, softmax_scale=bad)
    with pytest.raises(TypeError, match=r"softmax_scale"):
        dash_attn.attention(q, k, v, softmax_scale="0.1")


def test_schedule_checks():
    q, k, v = qkv_meta()
    with pytest.raises(ValueError, match=r"schedule must be one of"):
        dash_attn.attention(q, k, v, schedule="fastest")
    with pytest.raises(ValueError, match=r"'atomic' is non-deterministic"):
        dash_attn.attention(q, k, v, schedule="atomic", deterministic=True)
    with pytest.raises(TypeError, match=r"deterministic"):
        dash_attn.attention(q, k, v, deterministic="yes")
    with pytest.raises(ValueError, match=r"num_ctas"):
        dash_attn.attention(q, k, v, num_ctas=-1)


def test_schedule_resolution():
    r = dash_attn._resolve_schedule
    assert r("f", "auto", False) == "atomic"
    assert r("f", "auto", True) == "auto"
    assert r("f", "shift", False) == "shift"
    assert r("f", "descending", True) == "descending"
    assert r("f", "atomic", False) == "atomic"
    prev = torch.are_deterministic_algorithms_enabled()
    prev_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    try:
        torch.use_deterministic_algorithms(False)
        assert r("f", "auto", None) == "atomic"
        torch.use_deterministic_algorithms(True)
        assert r("f", "auto", None) == "auto"
        assert r("f", "auto", False) == "atomic"  # explicit argument wins
        with pytest.raises(ValueError, match=r"non-deterministic"):
            r("f", "atomic", None)
        torch.use_deterministic_algorithms(True, warn_only=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert r("f", "atomic", None) == "atomic"
        assert any("non-deterministic" in str(x.message) for x in w)
    finally:
        torch.use_deterministic_algorithms(prev, warn_only=prev_warn)


# ---- layout helper ----------------------------------------------------------------------------
def test_kernel_layout_no_copy_for_good_strides():
    x = torch.randn(2, 8, 4, 64, dtype=BF16)
    assert _ops.kernel_layout(x) is x
    t = torch.randn(2, 4, 8, 64, dtype=BF16).transpose(1, 2)  # SDPA layout viewed as (b, s, h, d)
    assert _ops.kernel_layout(t) is t
    one = torch.randn(1, 1, 1, 64, dtype=BF16).as_strided((1, 1, 1, 64), (3, 5, 7, 1))  # size-1 dims
    assert _ops.kernel_layout(one) is one


def test_kernel_layout_copies_when_needed():
    base = torch.randn(2, 10, 3, 68, dtype=BF16)
    x = base[..., :64]  # seq stride 204: not a multiple of 8
    y = _ops.kernel_layout(x)
    assert y is not x and y.is_contiguous() and torch.equal(y, x)
    e = torch.randn(2, 10, 1, 64, dtype=BF16).expand(2, 10, 4, 64)  # head stride 0
    y = _ops.kernel_layout(e)
    assert y is not e and y.is_contiguous() and torch.equal(y, e)
    flat = torch.randn(4 + 2 * 8 * 4 * 64, dtype=BF16)
    m = flat[4:].view(2, 8, 4, 64)  # contiguous but storage offset 4: misaligned
    y = _ops.kernel_layout(m)
    assert y is not m and y.storage_offset() == 0 and torch.equal(y, m)
    assert _ops.kernel_layout(m, check_offset=False) is m


# ---- fake implementation ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [BF16, FP16])
@pytest.mark.parametrize("sq,sk,hq,hkv,d", [(113, 113, 4, 4, 64), (300, 700, 8, 2, 128), (700, 300, 8, 1, 64)])
def test_fake_shapes(dtype, sq, sk, hq, hkv, d):
    with FakeTensorMode():
        q = torch.empty(2, sq, hq, d, dtype=dtype, device="cuda")
        k = torch.empty(2, sk, hkv, d, dtype=dtype, device="cuda")
        v = torch.empty(2, sk, hkv, d, dtype=dtype, device="cuda")
        o, lse = torch.ops.dash_attn.fwd(q, k, v, True, 0.0, "auto", 0)
        assert o.shape == q.shape and o.dtype == dtype and o.device == q.device and o.is_contiguous()
        assert lse.shape == (2, hq, sq) and lse.dtype == torch.float32 and lse.is_contiguous()
        dq, dk, dv = torch.ops.dash_attn.bwd(o, q, k, v, o, lse, True, 0.0, "descending", 0)
        assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)
        assert dq.dtype == dk.dtype == dv.dtype == dtype
        out = dash_attn.attention(q, k, v, causal=True)
        assert out.shape == q.shape and out.dtype == dtype
        out = dash_attn.attention_sdpa_layout(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        assert out.shape == (2, hq, sq, d)


def test_fake_checks_run_too():
    with FakeTensorMode():
        q = torch.empty(2, 64, 4, 96, dtype=BF16, device="cuda")
        with pytest.raises(ValueError, match=r"head_dim 96"):
            dash_attn.attention(q, q, q)


def test_meta_autograd():
    q, k, v = qkv_meta(sq=100, sk=50, hq=8, hkv=2, d=128, requires_grad=True)
    o = dash_attn.attention(q, k, v, causal=True)
    assert o.shape == q.shape and o.requires_grad
    o.sum().backward()  # expanded (stride-0) grad: the backward copies it into a kernel layout
    assert q.grad.shape == q.shape and k.grad.shape == k.shape and v.grad.shape == v.shape
    assert q.grad.dtype == BF16


# ---- torch.compile tracing (no GPU: meta tensors, no-codegen backends) -------------------------
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compile_fullgraph_meta(backend):
    torch._dynamo.reset()

    def f(q, k, v):
        return dash_attn.attention(q, k, v, causal=True, deterministic=True) * 2

    def g(q, k, v):
        return dash_attn.attention_sdpa_layout(q, k, v, deterministic=True)

    q, k, v = qkv_meta(sq=100, sk=60, requires_grad=True)
    o = torch.compile(f, fullgraph=True, backend=backend)(q, k, v)
    o.sum().backward()
    assert o.shape == q.shape and q.grad.shape == q.shape and k.grad.shape == k.shape
    o = torch.compile(g, fullgraph=True, backend=backend)(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    assert o.shape == (2, 8, 100, 64)


def test_compile_no_graph_break_and_determinism_guard():
    torch._dynamo.reset()
    seen = []

    def backend(gm, example_inputs):
        for n in gm.graph.nodes:
            if n.op == "call_function" and "dash_attn" in str(n.target):
                seen.append(n.args[-2])  # bwd_schedule
        return gm

    def f(q, k, v):
        return dash_attn.attention(q, k, v, causal=True)

    q, k, v = qkv_meta()
    cf = torch.compile(f, fullgraph=True, backend=backend)
    prev = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(False)
        cf(q, k, v)
        torch.use_deterministic_algorithms(True)
        cf(q, k, v)  # the global flag is guarded on: recompiles with the deterministic schedule
    finally:
        torch.use_deterministic_algorithms(prev)
    assert seen == ["atomic", "auto"]
    explain = torch._dynamo.explain(f)(q, k, v)
    assert explain.graph_break_count == 0 and explain.graph_count == 1


# ---- eager autograd.Function path (the default; DASH_EAGER_FUNCTION=0 turns it off) ------------------
def test_eager_function_on_by_default_and_only_for_plain_cuda_tensors():
    q, k, v = qkv_meta()
    assert _ops._EAGER_FN == (os.environ.get("DASH_EAGER_FUNCTION") != "0")  # on unless DASH_EAGER_FUNCTION=0
    with _ops.eager_function():
        assert _ops._EAGER_FN
        assert not _ops.eager_function_applies(q, k, v)  # meta tensors keep the custom ops
        with FakeTensorMode():
            fq = torch.empty(2, 64, 4, 64, dtype=BF16, device="cuda")
            assert not _ops.eager_function_applies(fq, fq, fq)  # FakeTensor keeps the custom ops
            out = dash_attn.attention(fq, fq, fq, causal=True)  # still traces through the fake op
            assert out.shape == fq.shape
        with _ops.eager_function(False):
            assert not _ops._EAGER_FN
        assert _ops._EAGER_FN
    default = _ops._EAGER_FN
    with _ops.eager_function(not default):
        assert _ops._EAGER_FN is (not default)
    assert _ops._EAGER_FN is default


def test_eager_function_env_switch():
    """DASH_EAGER_FUNCTION: unset or anything but "0" -> the eager path; "0" -> the custom ops."""
    code = "import dash_attn._ops as o; print(o._EAGER_FN)"
    for val, want in ((None, "True"), ("1", "True"), ("0", "False")):
        env = {k: x for k, x in os.environ.items() if k != "DASH_EAGER_FUNCTION"}
        if val is not None:
            env["DASH_EAGER_FUNCTION"] = val
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip().splitlines()[-1] == want, (val, out.stdout, out.stderr)


class _FakeExtension:
    """Stands in for dash_attn._C on the CPU: fwd/bwd through float64 math (autograd), recording
    the arguments each call received."""

    def __init__(self):
        self.calls = []

    @staticmethod
    def _math(q, k, v, causal, scale):
        b, sq, hq, d = q.shape
        sk, hkv = k.shape[1], k.shape[2]
        qt, kt, vt = (x.transpose(1, 2).double() for x in (q, k, v))
        kt, vt = kt.repeat_interleave(hq // hkv, dim=1), vt.repeat_interleave(hq // hkv, dim=1)
        s = qt @ kt.transpose(-1, -2) * (scale or 1 / d ** 0.5)
        if causal:
            i = torch.arange(sq)[:, None]
            j = torch.arange(sk)[None, :]
            s = s.masked_fill(j > i + sk - sq, float("-inf"))
        lse = torch.logsumexp(s, dim=-1)
        return (torch.softmax(s, dim=-1) @ vt).transpose(1, 2), lse

    def fwd(self, q, k, v, causal, scale):
        self.calls.append(("fwd", causal, scale))
        o, lse = self._math(q, k, v, causal, scale)
        return o.to(q.dtype).contiguous(), lse.float()

    def bwd(self, dout, q, k, v, o, lse, causal, scale, schedule, num_ctas):
        self.calls.append(("bwd", causal, scale, schedule, num_ctas))
        with torch.enable_grad():  # called from a backward, where grad mode is off
            leaves = [x.detach().double().requires_grad_(True) for x in (q, k, v)]
            out, _ = self._math(*leaves, causal, scale)
            g = torch.autograd.grad(out, leaves, dout.double())
        return tuple(x.to(q.dtype) for x in g)


def _use_fake_extension(monkeypatch, ext):
    """The eager path on CPU tensors: `ext` as the extension, the path taken, the CUDA checks off."""
    monkeypatch.setattr(_ops, "extension", lambda: ext)
    monkeypatch.setattr(_ops, "eager_function_applies", lambda q, k, v: True)
    monkeypatch.setattr(dash_attn, "_check_inputs", lambda fn, q, k, v: None)  # CPU tensors here


def test_eager_function_calls_the_extension_like_the_custom_ops(monkeypatch):
    """The eager path (CPU tensors here, with the applicability test and the extension faked):
    one fwd and one bwd call with the arguments the custom ops pass, the extension's values as
    output and gradients, lse not differentiable."""
    ext = _FakeExtension()
    _use_fake_extension(monkeypatch, ext)
    g = torch.Generator().manual_seed(7)
    q = torch.randn(2, 70, 4, 64, generator=g).to(BF16).requires_grad_(True)
    k = torch.randn(2, 90, 2, 64, generator=g).to(BF16).requires_grad_(True)
    v = torch.randn(2, 90, 2, 64, generator=g).to(BF16).requires_grad_(True)
    do = torch.randn(2, 70, 4, 64, generator=g).to(BF16)
    o = dash_attn.attention(q, k, v, causal=True, schedule="spt", deterministic=True, num_ctas=31)
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)
    assert ext.calls == [("fwd", True, 0.0), ("bwd", True, 0.0, "spt", 31)]
    ref_o, _ = ext.fwd(q.detach(), k.detach(), v.detach(), True, 0.0)
    ref = ext.bwd(do, q.detach(), k.detach(), v.detach(), None, None, True, 0.0, "spt", 31)
    assert torch.equal(o.detach(), ref_o)
    for a, b in zip((dq, dk, dv), ref):
        assert torch.equal(a, b)
    # softmax_scale and schedule resolution happen before the path is chosen
    ext.calls.clear()
    o = dash_attn.attention(q, k, v, softmax_scale=0.1, deterministic=False)
    torch.autograd.grad(o, (q, k, v), do)
    assert ext.calls == [("fwd", False, 0.1), ("bwd", False, 0.1, "atomic", 0)]


class _RecordingExtension(_FakeExtension):
    """_FakeExtension that also keeps the tensors each call received."""

    def __init__(self):
        super().__init__()
        self.tensors = {}

    def fwd(self, q, k, v, causal, scale):
        o, lse = super().fwd(q, k, v, causal, scale)
        self.tensors["fwd"] = dict(q=q, k=k, v=v, o=o, lse=lse)
        return o, lse

    def bwd(self, dout, q, k, v, o, lse, causal, scale, schedule, num_ctas):
        self.tensors["bwd"] = dict(dout=dout, q=q, k=k, v=v, o=o, lse=lse)
        return super().bwd(dout, q, k, v, o, lse, causal, scale, schedule, num_ctas)


def _same_tensor(a, b):
    """The same memory seen the same way (saved outputs come back as new tensor objects)."""
    return (a.data_ptr(), a.shape, a.stride(), a.dtype) == (b.data_ptr(), b.shape, b.stride(), b.dtype)


def test_eager_function_lays_out_once_and_reuses_the_forward_tensors(monkeypatch):
    """The eager path lays q, k, v out once, in the forward, and its backward hands the extension
    those tensors and the o / lse the forward's extension call made; only grad_o is laid out."""
    ext = _RecordingExtension()
    _use_fake_extension(monkeypatch, ext)
    layouts = []
    real_layout = _ops.kernel_layout

    def counting_layout(t, check_offset=True):
        layouts.append((tuple(t.shape), check_offset))
        return real_layout(t, check_offset)

    monkeypatch.setattr(_ops, "kernel_layout", counting_layout)
    g = torch.Generator().manual_seed(11)
    # head stride 68: not a multiple of 8, so q needs a copy; k and v are used as they are.
    q = torch.randn(2, 40, 4, 68, generator=g).to(BF16)[..., :64].detach().requires_grad_(True)
    k = torch.randn(2, 50, 2, 64, generator=g).to(BF16).requires_grad_(True)
    v = torch.randn(2, 50, 2, 64, generator=g).to(BF16).requires_grad_(True)
    do = torch.randn(2, 40, 1, 64, generator=g).to(BF16).expand(2, 40, 4, 64)  # head stride 0: copied
    assert _ops.kernel_layout(q) is not q
    layouts.clear()

    o = dash_attn.attention(q, k, v, causal=True, schedule="spt", deterministic=True)
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)

    assert layouts == [((2, 40, 4, 64), True), ((2, 50, 2, 64), True), ((2, 50, 2, 64), True),
                       ((2, 40, 4, 64), True)]  # q, k, v in the forward; grad_o in the backward
    f, b = ext.tensors["fwd"], ext.tensors["bwd"]
    assert f["q"].is_contiguous() and torch.equal(f["q"], q.detach())
    assert f["k"] is k and f["v"] is v
    for name in ("q", "k", "v", "o", "lse"):
        assert _same_tensor(b[name], f[name]), name  # no second copy, nothing re-laid out
    assert b["dout"].is_contiguous() and torch.equal(b["dout"], do)
    assert _same_tensor(o, f["o"])
    # The same values as the custom ops' route would compute (the fake's own math).
    ref = _FakeExtension().bwd(do, q.detach(), k.detach(), v.detach(), None, None, True, 0.0, "spt", 0)
    for a, r in zip((dq, dk, dv), ref):
        assert torch.equal(a, r)


def test_extension_wrapper_is_cached_and_still_raises():
    """_Extension builds one wrapper per name (stored on the instance, so later lookups do not go
    through __getattr__) and the cached wrapper still turns error tuples into exceptions."""
    calls = []

    class Module:
        answer = 42

        @staticmethod
        def ok(x):
            calls.append(x)
            return (x, x + 1)

        @staticmethod
        def fail(kind):
            return ("__dash_error__", kind, f"dash_attn: bad {kind}")

    ext = _ops._Extension(Module())
    first = ext.ok
    assert ext.ok is first and "ok" in vars(ext) and first.__name__ == "ok"
    assert ext.ok(3) == (3, 4) and calls == [3]
    assert ext.answer == 42  # non-callable attributes pass through
    for _ in range(2):  # the first call builds the wrapper, the second uses the cached one
        with pytest.raises(ValueError, match=r"bad ValueError"):
            ext.fail("ValueError")
        with pytest.raises(TypeError, match=r"bad TypeError"):
            ext.fail("TypeError")
        with pytest.raises(RuntimeError, match=r"bad SomethingElse"):
            ext.fail("SomethingElse")
    assert ext.fail is ext.fail
    with pytest.raises(AttributeError):
        ext.missing


def _kernel_layout_by_the_rules(t, check_offset=True):
    """Whether the kernels take t as it is, spelled out (the rules kernel_layout implements)."""
    if t.stride(-1) != 1:
        return False
    for d in range(t.dim() - 1):
        if t.shape[d] > 1 and (t.stride(d) <= 0 or t.stride(d) % 8 != 0):
            return False
    return not check_offset or t.storage_offset() % 8 == 0


def test_kernel_layout_fast_path_keeps_the_rules():
    flat = torch.randn(4096, dtype=BF16)
    cases = [
        torch.randn(2, 8, 4, 64, dtype=BF16),
        torch.randn(2, 8, 4, 68, dtype=BF16),  # contiguous, head_dim not a multiple of 8
        torch.randn(2, 3, 5, 12, dtype=BF16),
        torch.randn(1, 1, 1, 8, dtype=BF16),
        flat[4:4 + 2 * 4 * 64].view(2, 4, 1, 64),  # contiguous, misaligned
        flat[8:8 + 2 * 4 * 64].view(2, 4, 1, 64),  # contiguous, aligned offset
        torch.randn(2, 4, 8, 64, dtype=BF16).transpose(1, 2),
        torch.randn(2, 0, 4, 64, dtype=BF16),  # empty
        torch.randn(0, dtype=BF16).as_strided((2, 0, 4, 64), (3, 5, 7, 1)),  # empty, odd strides
        torch.randn(2, 8, 1, 64, dtype=BF16).expand(2, 8, 4, 64),
    ]
    for t in cases:
        for check_offset in (True, False):
            y = _ops.kernel_layout(t, check_offset)
            assert (y is t) == _kernel_layout_by_the_rules(t, check_offset), (t.shape, t.stride(), check_offset)
            assert torch.equal(y, t)
            if y is not t:
                assert y.is_contiguous() and y.storage_offset() == 0


def test_eager_function_double_backward_still_raises(monkeypatch):
    """The eager backward skips once_differentiable's wrapper when grad mode is off (every plain
    backward) but keeps it under create_graph=True: a double backward raises, as before."""
    ext = _FakeExtension()
    _use_fake_extension(monkeypatch, ext)
    g = torch.Generator().manual_seed(5)
    q = torch.randn(1, 16, 2, 64, generator=g).to(BF16).requires_grad_(True)
    do = torch.randn(1, 16, 2, 64, generator=g).to(BF16).requires_grad_(True)
    o = dash_attn.attention(q, q, q, causal=True)
    dq, = torch.autograd.grad(o, q, do, create_graph=True)
    with pytest.raises(RuntimeError, match=r"differentiate twice"):
        dq.sum().backward()
    o = dash_attn.attention(q, q, q, causal=True)
    dq2, = torch.autograd.grad(o, q, do)
    assert not dq2.requires_grad and torch.equal(dq2, dq.detach())
