#!/usr/bin/env python
"""Peers benchmark (issue 4): our kernels (dash_attn, every schedule) against PyTorch's attention
backends, in ONE process, on the SAME tensors.

Implementations (names used in the table, the JSON and the plot):
  dash:<schedule>  dash_attn.attention, schedule ascending, spt, descending, shift,
                   symmetric_shift, auto (all deterministic=True) and atomic (deterministic=False)
  cudnn            SDPA, cuDNN backend (sdpa_kernel(SDPBackend.CUDNN_ATTENTION)), not det. mode
  cudnn_detmode    the same under torch.use_deterministic_algorithms(True) (PyTorch may refuse it:
                   the error is recorded)
  flash            SDPA, flash backend (FA2), not det. mode
  flash_detmode    SDPA flash under torch.use_deterministic_algorithms(True) (if PyTorch raises,
                   the error is recorded and the run is retried with warn_only=True)
  flex             torch.compile(flex_attention), causal through a block mask

Shapes: the standard sweep (bf16, 16k tokens per batch, hidden 2048: hdim 64 -> 32 heads, hdim
128 -> 16 heads, MHA, batch = tokens / seqlen). Peers get (b, h, s, d) transposed views of the
(b, s, h, d) tensors ours reads.

Timing: CUDA events around each iteration, median of --reps after --warmup, per round; with
--rounds R the implementations take turns for R rounds (order reversed every other round) and the
median is over all rounds (bwd_ms_rounds keeps each round's median), so that a slow phase of the
GPU is shared instead of landing on whichever implementation ran then. "fwd" runs the
forward with autograd recording (as in training); "fwd+bwd" runs the forward and
torch.autograd.grad; bwd = median of the backward's own time inside those iterations (a CUDA
event between the forward and torch.autograd.grad; until a77d6b6 it was median(fwd+bwd) -
median(fwd), kept as bwd_sub_ms: at seqlen 512 the forward medians scattered and the
difference was noise). The forward ratio against cuDNN comes from a separate forward-only phase
after the rounds (--fwd-rounds, on by default since the twenty-fifth session): every implementation
with its own forward kernel (the dash schedules share one: dash:auto's turn stands for them) times
--warmup + --fwd-reps forwards per turn, turns interleaved for --fwd-rounds rounds (order reversed
every other round), so that each forward follows a forward. After it a paired phase (--fwd-pairs,
twenty-sixth session) times one forward per forward kernel in turn, with no sync between them, and
reports fwd_vs_<peer>_fwd_paired, the median over the pairs of the peer's time / ours: the H200
switches between clock levels within a turn of --fwd-reps forwards (cuDNN's hdim 128 full 8k
forward 1.61 or 1.78 ms, ours 1.57 or 1.75 in the 3eca68b run), and neighbours share the level. The forwards timed inside the rounds
follow the previous implementation's fwd+bwd iterations and carry its after-effects: in the
a72dbe9 peers run the same dash forward kernel measured 3.14-3.78 ms at hdim 128 full 16k across
the dash columns and rounds (cuDNN 3.18-3.45); that ratio is kept as fwd_vs_cudnn_fwd_in_rounds.
FLOPs (FlashAttention convention):
fwd 4*b*h*s*s*d, halved for causal; bwd 2.5x fwd.

Determinism: the gradients of every timed fwd+bwd iteration (warm-up included) are compared
bitwise (int16 views) with the first one; det = no bit differed over all of them.

  python bench/peers.py --json peers.json --png peers.png
  python bench/peers.py --hdims 128 --masks causal --seqlens 2048,8192 --reps 5
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
import warnings

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DASH_SCHEDULES = ("ascending", "spt", "descending", "shift", "symmetric_shift", "auto", "atomic")
DASH_DET_EXPLICIT = ("ascending", "spt", "descending", "shift", "symmetric_shift")
PEERS = ("cudnn", "cudnn_detmode", "flash", "flash_detmode", "flex")
ALL_IMPLS = PEERS + tuple("dash:" + s for s in DASH_SCHEDULES)
DEFAULT_IMPLS = ALL_IMPLS


# ---------------------------------------------------------------------------------------------
# helpers
def csv_ints(s):
    return [int(x) for x in s.split(",") if x.strip()]


def csv_strs(s):
    return [x.strip() for x in s.split(",") if x.strip()]


def git_commit():
    if os.environ.get("DASH_COMMIT"):
        return os.environ["DASH_COMMIT"]
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        c = out.stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return c + ("+dirty" if dirty else "") if c != "unknown" else c
    except Exception:
        return "unknown"


def raise_recompile_limits(limit):
    """Lets torch.compile keep one graph per shape of a sweep (names differ across torch versions)."""
    import torch._dynamo.config as dcfg
    for attr in ("recompile_limit", "cache_size_limit"):
        if hasattr(dcfg, attr):
            setattr(dcfg, attr, max(getattr(dcfg, attr), limit))
    for attr in ("accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(dcfg, attr):
            setattr(dcfg, attr, max(getattr(dcfg, attr), 4 * limit))


def machine_info():
    info = {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "commit": git_commit(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": None,
        "gpu": None,
        "sms": None,
    }
    try:
        info["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        pass
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info["gpu"] = p.name
        info["sms"] = p.multi_processor_count
        info["capability"] = f"{p.major}.{p.minor}"
    try:
        import triton
        info["triton"] = triton.__version__
    except Exception:
        pass
    return info


@contextlib.contextmanager
def det_mode(on=True, warn_only=False, fill_uninitialized=True):
    """torch.use_deterministic_algorithms(on) inside, the previous state restored after."""
    prev = torch.are_deterministic_algorithms_enabled()
    prev_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    import torch.utils.deterministic as tud
    prev_fill = tud.fill_uninitialized_memory
    torch.use_deterministic_algorithms(on, warn_only=warn_only)
    tud.fill_uninitialized_memory = fill_uninitialized
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(prev, warn_only=prev_warn)
        tud.fill_uninitialized_memory = prev_fill


def short(e: BaseException, n=400):
    s = f"{type(e).__name__}: {e}".replace("\n", " ")
    return s if len(s) <= n else s[: n - 3] + "..."


def is_fatal_cuda_error(msg: str) -> bool:
    m = msg.lower()
    return any(t in m for t in ("illegal memory access", "illegal instruction", "unspecified launch failure",
                                "misaligned address", "device-side assert", "an illegal", "launch timed out"))


def fwd_flops(b, h, s, d, causal):
    f = 4.0 * b * h * s * s * d
    return f / 2 if causal else f


class Timer:
    """Per-iteration timing: CUDA events on a GPU, perf_counter with a sync on CPU (dry runs)."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def start(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def stop(self, start):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return (start, e)
        return (start, time.perf_counter())

    def ms(self, pair):
        a, b = pair
        if self.cuda:
            return a.elapsed_time(b)
        return (b - a) * 1e3


# ---------------------------------------------------------------------------------------------
# implementations: each returns fn(q, k, v) -> o in (b, s, h, d) layout, and a context factory
def make_impl(name, causal, s, device, state):
    """(attn(q, k, v) -> o_bshd, ctx() -> context manager wrapping fwd and bwd, notes dict)."""
    notes = {}
    null = contextlib.nullcontext
    if name.startswith("dash:") and state.get("fake_dash"):
        # --fake-dash (script self-test without the extension): math SDPA stands in for ours
        def attn(q, k, v):
            return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                  is_causal=causal).transpose(1, 2)
        notes["fake"] = True
        return attn, null, notes
    if name.startswith("dash:"):
        import dash_attn  # ImportError is recorded by the caller
        if device.type == "cuda" and not dash_attn.has_extension():
            dash_attn._ops.extension()  # raises the ImportError with the hint
        sched = name.split(":", 1)[1]
        det = sched != "atomic"

        def attn(q, k, v):
            return dash_attn.attention(q, k, v, causal=causal, schedule=sched, deterministic=det)
        notes["deterministic_arg"] = det
        return attn, null, notes

    from torch.nn.attention import SDPBackend, sdpa_kernel
    if name in ("cudnn", "cudnn_detmode", "flash", "flash_detmode"):
        backend = SDPBackend.CUDNN_ATTENTION if name.startswith("cudnn") else SDPBackend.FLASH_ATTENTION

        def attn(q, k, v):
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                   is_causal=causal)
            return o.transpose(1, 2)

        if name.endswith("_detmode"):
            wo = state.get(name + ":warn_only", False)
            fill = state["fill_uninitialized"]
            notes["det_mode"] = True
            notes["warn_only"] = wo
            return attn, (lambda: det_mode(True, warn_only=wo, fill_uninitialized=fill)), notes
        return attn, null, notes

    if name == "flex":
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        if "flex_compiled" not in state:
            state["flex_compiled"] = torch.compile(flex_attention, dynamic=False)
        fc = state["flex_compiled"]
        bm = None
        if causal:
            def causal_mask(b, h, q_idx, kv_idx):
                return q_idx >= kv_idx
            bm = create_block_mask(causal_mask, None, None, s, s, device=device)

        def attn(q, k, v):
            o = fc(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), block_mask=bm)
            return o.transpose(1, 2)
        notes["block_mask"] = "causal (q_idx >= kv_idx)" if causal else None
        return attn, null, notes
    raise ValueError(f"unknown implementation {name!r} (known: {', '.join(ALL_IMPLS)})")


def bits(t):
    return t.view(torch.int16) if t.element_size() == 2 else t.view(torch.int32)


class ImplRun:
    """One implementation on one shape: setup() (first call, accuracy, reference bits), then any
    number of time_round() calls (warm-up + reps of fwd, then of fwd+bwd, gradients compared
    bitwise with the first call's), then result(). With --rounds R the main loop interleaves the
    implementations' rounds (order reversed every other round), so that a slow phase of the GPU
    (clock or power state) is shared by all of them instead of landing on one."""

    def __init__(self, name, q, k, v, dout, causal, args, state, timer, ref):
        self.name, self.q, self.k, self.v, self.dout, self.causal = name, q, k, v, dout, causal
        self.args, self.state, self.timer, self.ref = args, state, timer, ref
        self.res = {"name": name}
        self.warnings = set()
        self.fwd_ms, self.fb_ms, self.bw_ms, self.round_bwd_ms = [], [], [], []
        self.fwd_phase_ms = []  # forward-only phase (time_fwd_turn)
        self._pair_t = []       # paired phase (time_fwd_once): timer pairs, converted by result()
        self.ref_bits = None
        self.mism = None
        self.n_cmp = 0

    @property
    def ok(self):
        return "error" not in self.res

    def _guard(self, fn):
        """Run fn() recording warnings; on an exception record the error (never raises)."""
        wrec = []
        try:
            with warnings.catch_warnings(record=True) as wrec:
                warnings.simplefilter("always")
                fn()
        except Exception as e:  # noqa: BLE001
            self.res["error"] = short(e)
            if self.args.verbose:
                traceback.print_exc()
            try:
                self.timer.sync()
            except Exception as e2:  # noqa: BLE001
                self.res["error"] += " | sync after error: " + short(e2, 200)
            self.ref_bits = None
        for w in wrec or []:
            self.warnings.add(f"{w.category.__name__}: {str(w.message)[:300]}")

    def _fwd(self):
        with self.ctx():
            return self.attn(self.q, self.k, self.v)

    def _fwdbwd(self, mid=None):
        # mid: a list; when given, a timer mark is appended between the forward and the
        # backward (the backward's own time, without subtracting two medians)
        with self.ctx():
            o = self.attn(self.q, self.k, self.v)
            if mid is not None:
                mid.append(self.timer.start())
            g = torch.autograd.grad(o, (self.q, self.k, self.v), self.dout)
        return o, g

    def setup(self):
        self._guard(self._setup)
        return self

    def _setup(self):
        res, ref = self.res, self.ref
        t_setup = time.perf_counter()
        self.attn, self.ctx, notes = make_impl(self.name, self.causal, self.q.shape[1], self.q.device, self.state)
        res.update(notes)
        # first call (compiles FlexAttention, builds cuDNN plans): outside the timed region
        o0, g0 = self._fwdbwd()
        self.timer.sync()
        res["first_call_s"] = round(time.perf_counter() - t_setup, 3)
        if self.name == "dash:auto":
            try:
                import dash_attn
                info = dash_attn.last_bwd_info() or {}
                res["auto_ran"] = info.get("schedule")
                res["bwd_info"] = {kk: (vv if isinstance(vv, (int, float, str, bool)) or vv is None else str(vv))
                                   for kk, vv in info.items()}
            except Exception as e:  # noqa: BLE001
                res["auto_ran"] = None
                res["bwd_info_error"] = short(e)
        # accuracy against the reference implementation of this shape (first that ran)
        if ref.get("o") is None:
            ref.update(name=self.name, o=o0.detach(), g=[x.detach() for x in g0])
        else:
            res["err_vs"] = ref["name"]
            res["max_abs_err"] = {
                nm: float((a.float() - b.float()).abs().max())
                for nm, a, b in zip(("o", "dq", "dk", "dv"), (o0, *g0), (ref["o"], *ref["g"]))
            }
        self.ref_bits = [bits(x.detach()).clone() for x in g0]
        res["nonfinite_grad"] = bool(any((~torch.isfinite(x)).any().item() for x in g0))
        self.mism = torch.zeros((), dtype=torch.int64, device=self.q.device)
        del o0, g0

    def time_round(self):
        if self.ok:
            self._guard(self._time_round)
        return self

    def _timed_fwds(self, reps):
        """--warmup forwards (autograd recording, as in training), then `reps` timed ones: their ms."""
        timer = self.timer
        for _ in range(self.args.warmup):
            o = self._fwd()
            del o
        timer.sync()
        ts = []
        for _ in range(reps):
            t0 = timer.start()
            o = self._fwd()
            ts.append(timer.stop(t0))
            del o
        timer.sync()
        return [timer.ms(p) for p in ts]

    def _time_round(self):
        args, timer = self.args, self.timer
        self.fwd_ms += self._timed_fwds(args.reps)

        # forward + backward; gradients compared bitwise with the first call's, off the clock
        for _ in range(args.warmup):
            o, g = self._fwdbwd()
            for a, b in zip(g, self.ref_bits):
                self.mism += (bits(a) != b).sum()
            self.n_cmp += 1
            del o, g
        timer.sync()
        fb_t, bw_t = [], []
        for _ in range(args.reps):
            t0 = timer.start()
            mid = []
            o, g = self._fwdbwd(mid)
            fb_t.append(timer.stop(t0))
            bw_t.append((mid[0], fb_t[-1][1]))
            for a, b in zip(g, self.ref_bits):
                self.mism += (bits(a) != b).sum()
            self.n_cmp += 1
            del o, g
        timer.sync()
        self.fb_ms += [timer.ms(p) for p in fb_t]
        bw = [timer.ms(p) for p in bw_t]
        self.bw_ms += bw
        self.round_bwd_ms.append(statistics.median(bw))

    def time_fwd_turn(self, reps):
        """One turn of the forward-only phase: --warmup forwards, then `reps` timed ones."""
        if self.ok:
            self._guard(lambda: self._time_fwd_turn(reps))
        return self

    def _time_fwd_turn(self, reps):
        self.fwd_phase_ms += self._timed_fwds(reps)

    def warm_fwd(self):
        """--warmup untimed forwards (before the paired phase)."""
        if self.ok:
            self._guard(lambda: self._timed_fwds(0))
        return self

    def time_fwd_once(self):
        """One timed forward of the paired phase (no sync: the implementations' forwards queue back
        to back, so neighbours in the queue run at the same clocks)."""
        if self.ok:
            self._guard(self._fwd_once)
        return self

    def _fwd_once(self):
        t0 = self.timer.start()
        o = self._fwd()
        self._pair_t.append(self.timer.stop(t0))
        del o

    def result(self):
        res = self.res
        if self.ok and self._pair_t:
            self.timer.sync()
            res["fwd_pair_ms_all"] = [round(self.timer.ms(t), 4) for t in self._pair_t]
            self._pair_t = []
        if self.ok and self.fwd_phase_ms:
            res["fwd_phase_ms"] = statistics.median(self.fwd_phase_ms)
            res["fwd_phase_ms_all"] = [round(x, 4) for x in self.fwd_phase_ms]
        if self.ok and self.bw_ms:
            res["fwd_ms"] = statistics.median(self.fwd_ms)
            res["fwdbwd_ms"] = statistics.median(self.fb_ms)
            res["bwd_ms"] = statistics.median(self.bw_ms)
            res["bwd_sub_ms"] = res["fwdbwd_ms"] - res["fwd_ms"]  # the convention before the fifth session
            res["bwd_ms_all"] = [round(x, 4) for x in self.bw_ms]
            res["fwd_ms_all"] = [round(x, 4) for x in self.fwd_ms]
            res["fwdbwd_ms_all"] = [round(x, 4) for x in self.fb_ms]
            res["bwd_ms_rounds"] = [round(x, 4) for x in self.round_bwd_ms]
            m = int(self.mism.item())
            res["det_runs"] = self.n_cmp + 1
            res["det_mismatch_elems"] = m
            res["det"] = m == 0
        elif self.ok:
            res["error"] = "no timed round ran"
        self.ref_bits = None
        if self.warnings:
            res["warnings"] = sorted(self.warnings)
        return res


# ---------------------------------------------------------------------------------------------
def ratio(a, b):
    if a is None or b is None or not b or not math.isfinite(a) or not math.isfinite(b):
        return None
    return a / b


def shape_ratios(impls):
    """The issue-4 ratios from one shape's results (bwd/fwd TFLOP/s)."""
    def bwd(n):
        r = impls.get(n)
        return r.get("bwd_tflops") if r and "error" not in r else None

    def fwd(n):
        r = impls.get(n)
        return r.get("fwd_tflops") if r and "error" not in r else None

    out = {}
    det = {s: bwd("dash:" + s) for s in DASH_DET_EXPLICIT}
    det = {s: x for s, x in det.items() if x is not None}
    if det:
        best_s = max(det, key=det.get)
        best = det[best_s]
        out["best_det_schedule"] = best_s
        out["best_det_bwd_tflops"] = best
        out["best_det_vs_cudnn_bwd"] = ratio(best, bwd("cudnn"))
        out["best_det_vs_flex_bwd"] = ratio(best, bwd("flex"))
        out["best_det_vs_flash_detmode_bwd"] = ratio(best, bwd("flash_detmode"))
        out["best_det_vs_atomic"] = ratio(best, bwd("dash:atomic"))
        base = [x for x in (det.get("ascending"), det.get("spt")) if x is not None]
        out["best_vs_max_ascending_spt"] = ratio(best, max(base)) if base else None
        out["shift_vs_ascending"] = ratio(det.get("shift"), det.get("ascending"))
        out["auto_vs_best"] = ratio(bwd("dash:auto"), best)
        out["auto_ran"] = impls.get("dash:auto", {}).get("auto_ran")
    dash_fwd = [fwd("dash:" + s) for s in DASH_SCHEDULES]
    dash_fwd = [x for x in dash_fwd if x is not None]
    if dash_fwd:
        # in the rounds: the median over the dash columns (one forward kernel) against cuDNN's column
        out["dash_fwd_tflops_in_rounds"] = statistics.median(dash_fwd)
        out["fwd_vs_cudnn_fwd_in_rounds"] = ratio(out["dash_fwd_tflops_in_rounds"], fwd("cudnn"))
        out["fwd_vs_flex_fwd_in_rounds"] = ratio(out["dash_fwd_tflops_in_rounds"], fwd("flex"))
        out["dash_fwd_tflops"] = out["dash_fwd_tflops_in_rounds"]
        out["fwd_vs_cudnn_fwd"] = out["fwd_vs_cudnn_fwd_in_rounds"]
        out["fwd_vs_flex_fwd"] = out["fwd_vs_flex_fwd_in_rounds"]

    def fwdp(n):
        r = impls.get(n)
        return r.get("fwd_phase_tflops") if r and "error" not in r else None

    # the one dash implementation that ran the forward-only phase (main picks it: fwd_phase_dash)
    rep = next((n for n in impls if n.startswith("dash:") and fwdp(n) is not None), None)
    # the paired phase (--fwd-pairs): per peer, the median over the pairs of its time / ours
    prep = next((n for n in impls if n.startswith("dash:") and (impls[n] or {}).get("fwd_pair_ms_all")), None)
    if prep:
        for peer in ("cudnn", "flex", "flash"):
            x = paired_ratio((impls.get(peer) or {}).get("fwd_pair_ms_all"), impls[prep]["fwd_pair_ms_all"])
            if x is not None:
                out[f"fwd_vs_{peer}_fwd_paired"] = x
    if rep:
        # the forward-only phase (the default): replaces the in-round ratio
        out["fwd_ratio_from"] = "fwd phase (" + rep + ")"
        out["dash_fwd_tflops"] = fwdp(rep)
        out["fwd_vs_cudnn_fwd"] = ratio(fwdp(rep), fwdp("cudnn"))
        out["fwd_vs_flex_fwd"] = ratio(fwdp(rep), fwdp("flex"))
    return out


def fatal_error_in(runs):
    """Whether an implementation of this shape hit a CUDA error that ends the sweep."""
    return any(not r.ok and is_fatal_cuda_error(r.res["error"]) for r in runs.values())


def paired_ratio(peer_ms, ours_ms):
    """Median over the pairs of peer_ms[k] / ours_ms[k] (> 1: ours faster); None unless both ran
    every pair."""
    if not peer_ms or not ours_ms or len(peer_ms) != len(ours_ms) or min(ours_ms) <= 0:
        return None
    return statistics.median(a / b for a, b in zip(peer_ms, ours_ms))


def fwd_phase_dash(names):
    """The dash implementation whose turn stands for every dash schedule in the forward-only phase
    (they all run the same forward kernel): dash:auto, else the first dash one."""
    dash = [n for n in names if n.startswith("dash:")]
    return "dash:auto" if "dash:auto" in dash else (dash[0] if dash else None)


def fmt(x, nd=1):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def print_tables(results, impl_names, file=sys.stdout):
    groups = {}
    for r in results:
        groups.setdefault((r["hdim"], r["mask"]), []).append(r)
    short_names = {n: n.replace("dash:", "").replace("symmetric_shift", "sym_shift") for n in impl_names}
    for (hdim, mask), rows in groups.items():
        for what in ("bwd", "fwd", "fwd_phase"):
            if what == "fwd_phase" and not any(x.get("fwd_phase_tflops") for r in rows for x in r["impls"].values()):
                continue
            title = {"bwd": "bwd", "fwd": "fwd (in the rounds)", "fwd_phase": "fwd (forward-only phase)"}[what]
            print(f"\n{title} TFLOP/s, hdim {hdim}, {mask} (det: * = gradients bitwise equal over the runs, "
                  f"! = differed, E = error)", file=file)
            hdr = ["seqlen", "batch"] + [short_names[n] for n in impl_names]
            w = [6, 5] + [max(8, len(h)) for h in hdr[2:]]
            print("  ".join(h.rjust(wi) for h, wi in zip(hdr, w)), file=file)
            for r in rows:
                cells = [str(r["seqlen"]), str(r["batch"])]
                for n in impl_names:
                    x = r["impls"].get(n)
                    if x is None:
                        cells.append("")
                    elif "error" in x:
                        cells.append("E")
                    else:
                        mark = "*" if x.get("det") else "!"
                        cells.append(fmt(x.get(f"{what}_tflops")) + (mark if what == "bwd" else ""))
                print("  ".join(c.rjust(wi) for c, wi in zip(cells, w)), file=file)
        print(f"\nratios, hdim {hdim}, {mask} (bwd unless marked; best = best explicit deterministic schedule)",
              file=file)
        cols = [("best", "best_det_schedule"), ("best TF", "best_det_bwd_tflops"),
                ("/cudnn", "best_det_vs_cudnn_bwd"), ("/flex", "best_det_vs_flex_bwd"),
                ("/fa2det", "best_det_vs_flash_detmode_bwd"), ("/atomic", "best_det_vs_atomic"),
                ("/max(asc,spt)", "best_vs_max_ascending_spt"), ("shift/asc", "shift_vs_ascending"),
                ("auto/best", "auto_vs_best"), ("auto ran", "auto_ran"), ("fwd/cudnn", "fwd_vs_cudnn_fwd"),
                ("fwd/cudnn rnd", "fwd_vs_cudnn_fwd_in_rounds"), ("fwd/cudnn pair", "fwd_vs_cudnn_fwd_paired")]
        w = [6] + [max(9, len(c[0])) for c in cols]
        w[1] = 15
        print("  ".join(h.rjust(wi) for h, wi in zip(["seqlen"] + [c[0] for c in cols], w)), file=file)
        for r in rows:
            rr = r.get("ratios", {})
            cells = [str(r["seqlen"])]
            for _, key in cols:
                x = rr.get(key)
                cells.append(fmt(x, 1 if key == "best_det_bwd_tflops" else 3))
            print("  ".join(c.rjust(wi) for c, wi in zip(cells, w)), file=file)
    errs = [(r["hdim"], r["mask"], r["seqlen"], n, x["error"]) for r in results for n, x in r["impls"].items()
            if "error" in x]
    if errs:
        print("\nerrors:", file=file)
        for e in errs:
            print(f"  hdim {e[0]} {e[1]} s={e[2]} {e[3]}: {e[4]}", file=file)


def draw_png(results, impl_names, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        print(f"[peers] no PNG: matplotlib unavailable ({short(e)})")
        return False
    groups = {}
    for r in results:
        groups.setdefault((r["hdim"], r["mask"]), []).append(r)
    keys = sorted(groups, key=lambda x: (-x[0], x[1]))
    if not keys:
        return False
    ncol = 2 if len(keys) > 1 else 1
    nrow = (len(keys) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(7.5 * ncol, 5 * nrow), squeeze=False)
    styles = {}
    cmap = plt.get_cmap("tab20")
    for i, n in enumerate(impl_names):
        styles[n] = dict(color=cmap(i % 20), marker="o" if n.startswith("dash:") else "s",
                         linestyle="-" if n.startswith("dash:") else "--")
    for ax, key in zip(axes.flat, keys):
        rows = sorted(groups[key], key=lambda r: r["seqlen"])
        for n in impl_names:
            xs, ys = [], []
            for r in rows:
                x = r["impls"].get(n)
                if x and "error" not in x and x.get("bwd_tflops") is not None:
                    xs.append(r["seqlen"])
                    ys.append(x["bwd_tflops"])
            if xs:
                label = n + ("" if all(r["impls"].get(n, {}).get("det", False) for r in rows
                                       if n in r["impls"] and "error" not in r["impls"][n]) else " (not det)")
                ax.plot(xs, ys, label=label, **styles[n])
        ax.set_xscale("log", base=2)
        ax.set_xticks([r["seqlen"] for r in rows])
        ax.set_xticklabels([f"{r['seqlen'] // 1024}k" if r["seqlen"] >= 1024 else str(r["seqlen"]) for r in rows])
        ax.set_xlabel("seqlen (16k tokens per batch)")
        ax.set_ylabel("backward TFLOP/s")
        ax.set_title(f"hdim {key[0]}, {key[1]}")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, ncol=2)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    fig.suptitle("attention backward, bf16 (FlashAttention FLOP convention)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hdims", default="128,64", help="head dims, comma-separated (default 128,64)")
    ap.add_argument("--masks", default="causal,full", help="causal,full (default both)")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--tokens", type=int, default=16384, help="tokens per batch: batch = tokens / seqlen")
    ap.add_argument("--hidden", type=int, default=2048, help="heads = hidden / hdim")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    ap.add_argument("--impls", default=",".join(DEFAULT_IMPLS),
                    help=f"comma-separated subset of: {', '.join(ALL_IMPLS)}; 'all' for every one")
    ap.add_argument("--skip", default="", help="comma-separated implementations to leave out")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10, help="timed iterations (median); det check over warmup+reps+1")
    ap.add_argument("--rounds", type=int, default=1,
                    help="timing rounds per implementation, interleaved across implementations (order "
                         "reversed every other round); the median is over all rounds' iterations")
    ap.add_argument("--fwd-rounds", type=int, default=5,
                    help="rounds of the forward-only phase after the fwd+bwd rounds (0 = none: the forward ratio "
                         "then comes from the forwards timed inside the rounds)")
    ap.add_argument("--fwd-reps", type=int, default=10, help="timed forwards per turn of the forward-only phase")
    ap.add_argument("--fwd-pairs", type=int, default=60,
                    help="paired forward phase after the forward-only phase: this many single forwards per forward "
                         "kernel, the kernels in turn with no sync between them; fwd_vs_<peer>_fwd_paired = median "
                         "over the pairs of the peer's time / ours (0 = none)")
    ap.add_argument("--budget-s", type=float, default=0.0,
                    help="stop starting new shapes after this many seconds (0 = no limit); skipped shapes are "
                         "listed in the JSON")
    ap.add_argument("--fill-uninitialized", action="store_true",
                    help="keep torch.utils.deterministic.fill_uninitialized_memory=True in det mode (PyTorch's "
                         "default; it fills every torch.empty, a debug aid that is not needed for "
                         "reproducible results). Default: off, so det mode is not charged for it")
    ap.add_argument("--recompile-limit", type=int, default=1000,
                    help="torch._dynamo recompile limit (FlexAttention recompiles per shape)")
    ap.add_argument("--json", default=None, help="write results here (rewritten after every shape)")
    ap.add_argument("--png", default=None, help="draw bwd TFLOP/s vs seqlen here")
    ap.add_argument("--device", default="cuda", help="cuda (default); 'cpu' only for dry runs of this script")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    ap.add_argument("--fake-dash", action="store_true", help=argparse.SUPPRESS)  # self-test of this script
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.reps < 1:
        ap.error(f"--rounds and --reps must be >= 1, got {args.rounds} and {args.reps}")
    if args.fwd_pairs < 0:
        ap.error(f"--fwd-pairs must be >= 0, got {args.fwd_pairs}")
    if args.fwd_rounds < 0 or args.fwd_reps < 1:
        ap.error(f"--fwd-rounds must be >= 0 and --fwd-reps >= 1, got {args.fwd_rounds} and {args.fwd_reps}")
    for pth in (args.json, args.png):
        if pth and os.path.dirname(pth):
            os.makedirs(os.path.dirname(pth), exist_ok=True)

    hdims, masks, seqlens = csv_ints(args.hdims), csv_strs(args.masks), csv_ints(args.seqlens)
    impl_names = list(ALL_IMPLS) if args.impls.strip() == "all" else csv_strs(args.impls)
    skip = set(csv_strs(args.skip))
    impl_names = [n for n in impl_names if n not in skip]
    for n in impl_names:
        if n not in ALL_IMPLS:
            ap.error(f"unknown implementation {n!r}; known: {', '.join(ALL_IMPLS)}")
    for m in masks:
        if m not in ("causal", "full"):
            ap.error(f"mask must be causal or full, got {m!r}")
    # peers first, ours after: a failure in ours cannot take the peers of that shape with it
    impl_names.sort(key=lambda n: (n.startswith("dash:"), ALL_IMPLS.index(n)))
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("[peers] no CUDA device: nothing to measure (use --device cpu for a dry run)")
        return 2

    raise_recompile_limits(args.recompile_limit)

    meta = machine_info()
    meta["args"] = vars(args)
    meta["impls"] = impl_names
    meta["conventions"] = {
        "fwd_flops": "4*b*h*s*s*d, halved for causal", "bwd_flops": "2.5 * fwd_flops",
        "bwd_ms": "median over the fwd+bwd iterations of the time from after the forward's launches to "
                  "the end of the backward (bwd_sub_ms: median(fwd+bwd) - median(fwd), the convention until a77d6b6)", "timing": "CUDA events per iteration, median over all rounds' iterations; with --rounds R > 1 "
                  "the implementations take turns round by round (order reversed every other round)",
        "det": "all dq/dk/dv bitwise equal (int16 views) over det_runs fwd+bwd runs",
        "det_mode": "torch.use_deterministic_algorithms(True) around fwd and bwd; "
                    f"fill_uninitialized_memory={bool(args.fill_uninitialized)}",
        "layout": "q/k/v (b, s, h, d) contiguous; SDPA/flex get transpose(1, 2) views of them",
        "fwd_ratio": "fwd_vs_cudnn_fwd from the forward-only phase (--fwd-rounds turns of --warmup + --fwd-reps "
                     "forwards per forward kernel, interleaved, dash:auto standing for the dash schedules) when it "
                     "ran; fwd_vs_cudnn_fwd_in_rounds: median of the dash columns' in-round forwards over cuDNN's",
    }
    try:
        import dash_attn
        meta["dash_attn"] = getattr(dash_attn, "__version__", "?")
        meta["dash_attn_file"] = dash_attn.__file__
        meta["dash_attn_extension"] = dash_attn.has_extension()
    except Exception as e:  # noqa: BLE001
        meta["dash_attn_import_error"] = short(e)
    print(f"[peers] {meta.get('gpu')} ({meta.get('sms')} SMs), torch {meta['torch']}, cuda {meta['cuda']}, "
          f"cudnn {meta['cudnn']}, commit {meta['commit']}, {meta['date_utc']} UTC", flush=True)
    print(f"[peers] impls: {', '.join(impl_names)}; warmup {args.warmup}, reps {args.reps}", flush=True)

    state = {"fill_uninitialized": bool(args.fill_uninitialized), "fake_dash": bool(args.fake_dash)}
    timer = Timer(device)
    results, skipped = [], []
    t_start = time.perf_counter()
    fatal = None

    def dump():
        if args.json:
            doc = {"meta": meta, "results": results, "skipped": skipped, "fatal": fatal,
                   "elapsed_s": round(time.perf_counter() - t_start, 1)}
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(tmp, args.json)

    shapes = [(h, m, s) for h in hdims for m in masks for s in seqlens]
    for hdim, mask, s in shapes:
        if fatal:
            skipped.append({"hdim": hdim, "mask": mask, "seqlen": s, "why": "fatal CUDA error earlier"})
            continue
        if args.budget_s and time.perf_counter() - t_start > args.budget_s:
            skipped.append({"hdim": hdim, "mask": mask, "seqlen": s, "why": f"time budget {args.budget_s}s"})
            continue
        causal = mask == "causal"
        b = max(1, args.tokens // s)
        h = args.hidden // hdim
        fl = fwd_flops(b, h, s, hdim, causal)
        row = {"hdim": hdim, "mask": mask, "seqlen": s, "batch": b, "heads": h, "dtype": args.dtype,
               "fwd_flops": fl, "bwd_flops": 2.5 * fl, "impls": {}}
        t_shape = time.perf_counter()
        print(f"\n[peers] hdim {hdim} {mask} seqlen {s} batch {b} heads {h}", flush=True)
        try:
            g = torch.Generator(device=device).manual_seed(args.seed + s + hdim)
            q, k, v, dout = (torch.randn(b, s, h, hdim, device=device, dtype=dtype, generator=g) for _ in range(4))
            for t in (q, k, v):
                t.requires_grad_(True)
        except Exception as e:  # noqa: BLE001
            row["error"] = short(e)
            results.append(row)
            dump()
            continue
        ref = {}
        runs = {}
        for name in impl_names:  # set up every implementation (first call, accuracy, reference bits)
            run = ImplRun(name, q, k, v, dout, causal, args, state, timer, ref).setup()
            if name == "flash_detmode" and not run.ok and "determinis" in run.res["error"].lower():
                # PyTorch refused deterministic flash: record that, then measure it in warn_only mode
                first_err = run.res["error"]
                state[name + ":warn_only"] = True
                run = ImplRun(name, q, k, v, dout, causal, args, state, timer, ref).setup()
                run.res["strict_error"] = first_err
            runs[name] = run
            if not run.ok and is_fatal_cuda_error(run.res["error"]):
                break
        for rnd in range(args.rounds):  # interleaved rounds, the order reversed every other round
            if fatal_error_in(runs):
                break
            for name in (impl_names if rnd % 2 == 0 else impl_names[::-1]):
                if name in runs:
                    runs[name].time_round()
        # forward-only phase: one turn per forward kernel (the dash schedules share one)
        dash_rep = fwd_phase_dash([n for n in impl_names if n in runs and runs[n].ok])
        fwd_names = [n for n in impl_names if n in runs and (not n.startswith("dash:") or n == dash_rep)]
        for rnd in range(args.fwd_rounds):
            if fatal_error_in(runs):
                break
            for name in (fwd_names if rnd % 2 == 0 else fwd_names[::-1]):
                runs[name].time_fwd_turn(args.fwd_reps)
        # paired phase: one forward per implementation in turn, --fwd-pairs times (order reversed
        # every other time), no sync in between: each pair of neighbours shares the GPU's clock state
        if args.fwd_pairs > 0 and len(fwd_names) > 1 and not fatal_error_in(runs):
            for name in fwd_names:
                runs[name].warm_fwd()
            for pair in range(args.fwd_pairs):
                for name in (fwd_names if pair % 2 == 0 else fwd_names[::-1]):
                    runs[name].time_fwd_once()
        for name in impl_names:
            if name not in runs:
                continue
            r = runs[name].result()
            if "error" not in r:
                r["fwd_tflops"] = fl / (r["fwd_ms"] * 1e-3) / 1e12 if r["fwd_ms"] > 0 else None
                if r.get("fwd_phase_ms"):
                    r["fwd_phase_tflops"] = fl / (r["fwd_phase_ms"] * 1e-3) / 1e12
                r["bwd_tflops"] = 2.5 * fl / (r["bwd_ms"] * 1e-3) / 1e12 if r["bwd_ms"] > 0 else None
                r["fwdbwd_tflops"] = 3.5 * fl / (r["fwdbwd_ms"] * 1e-3) / 1e12
                extra = f" ran {r['auto_ran']}" if "auto_ran" in r else ""
                print(f"  {name:22s} fwd {r['fwd_ms']:8.3f} ms {fmt(r['fwd_tflops']):>6} TF   "
                      f"bwd {r['bwd_ms']:8.3f} ms {fmt(r['bwd_tflops']):>6} TF   "
                      f"det {r['det']} ({r['det_runs']} runs){extra}   first call {r['first_call_s']}s", flush=True)
            else:
                print(f"  {name:22s} ERROR {r['error']}", flush=True)
                if is_fatal_cuda_error(r["error"]):
                    fatal = f"{name} hdim {hdim} {mask} s={s}: {r['error']}"
                    print(f"[peers] fatal CUDA error, stopping the sweep: {fatal}", flush=True)
            row["impls"][name] = r
            if fatal:
                break
        row["ratios"] = shape_ratios(row["impls"])
        row["elapsed_s"] = round(time.perf_counter() - t_shape, 1)
        results.append(row)
        del q, k, v, dout, ref
        if device.type == "cuda" and not fatal:
            try:
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass
        dump()

    print_tables(results, impl_names)
    if skipped:
        print(f"\n[peers] skipped {len(skipped)} shapes: " +
              ", ".join(f"hdim {x['hdim']} {x['mask']} {x['seqlen']} ({x['why']})" for x in skipped))
    dump()
    if args.json:
        print(f"\n[peers] JSON: {args.json}")
    if args.png and results:
        if draw_png(results, impl_names, args.png):
            print(f"[peers] PNG: {args.png}")
    print(f"[peers] total {time.perf_counter() - t_start:.1f}s")
    return 1 if fatal else 0


if __name__ == "__main__":
    sys.exit(main())
