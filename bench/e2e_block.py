#!/usr/bin/env python
"""End-to-end benchmark (issue 5 item 4): one transformer block, forward + backward, bf16, causal.

Block (pre-norm, as LLaMA / Qwen2): h = x + Wo(attn(rope(split(Wqkv(rmsnorm(x))))));
out = h + Wdown(silu(Wgate(rmsnorm(h))) * Wup(rmsnorm(h))) (gate and up fused in one linear).
A step = forward + out.backward(dout) (parameter and input gradients; no optimizer). Only the
attention differs between the rows:

  dash_det       dash_attn.attention(deterministic=True, schedule="auto"), (b, s, h, d) views of
                 the fused QKV output, native GQA
  sdpa_detmode   F.scaled_dot_product_attention(is_causal=True) with PyTorch's default backend
                 choice, under torch.use_deterministic_algorithms(True) (fwd and bwd)
  flex           torch.compile(flex_attention), causal block mask, enable_gqa=True (deterministic
                 by construction)
  cudnn          SDPA with the cuDNN backend only, not deterministic
  flash          SDPA with the flash backend only, not deterministic (extra reference)
  dash_atomic    dash_attn.attention(schedule="atomic"), our non-deterministic mode (extra)

SDPA GQA: enable_gqa=True first; if the backend refuses it, k/v are expanded with
repeat_interleave (recorded as gqa="expand").

Shapes: LLaMA3-8B (hidden 4096, 32/8 heads, head dim 128, ffn 14336) and Qwen2.5-7B (hidden
3584, 28/4 heads, head dim 128, ffn 18944); seqlen 4k and 8k; 16k tokens per step
(batch = tokens / seqlen). Median ms per step over --reps (CUDA events) after --warmup.

  python bench/e2e_block.py --json e2e.json
  python bench/e2e_block.py --models llama3-8b --seqlens 8192 --reps 5
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
import traceback
import warnings

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS determinism, before CUDA starts

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import (det_mode, machine_info, short, is_fatal_cuda_error, Timer, csv_ints, csv_strs,  # noqa: E402
                   raise_recompile_limits)

MODELS = {
    "llama3-8b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, rope_theta=500000.0),
    "qwen2.5-7b": dict(hidden=3584, heads=28, kv_heads=4, head_dim=128, ffn=18944, rope_theta=1000000.0),
}
IMPLS = ("dash_det", "sdpa_detmode", "flex", "cudnn", "flash", "dash_atomic")
DET_IMPLS = ("dash_det", "sdpa_detmode", "flex")


class Block:
    def __init__(self, cfg, seqlen, device, dtype, rope, seed=0):
        g = torch.Generator(device=device).manual_seed(seed)
        H, hq, hkv, d, ffn = cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"], cfg["ffn"]
        self.hq, self.hkv, self.d, self.H = hq, hkv, d, H

        def w(o, i):
            return (torch.randn(o, i, device=device, dtype=dtype, generator=g) / i ** 0.5).requires_grad_(True)
        self.norm1 = torch.ones(H, device=device, dtype=dtype, requires_grad=True)
        self.norm2 = torch.ones(H, device=device, dtype=dtype, requires_grad=True)
        self.wqkv = w((hq + 2 * hkv) * d, H)
        self.wo = w(H, hq * d)
        self.wgu = w(2 * ffn, H)
        self.wdown = w(H, ffn)
        self.params = [self.norm1, self.norm2, self.wqkv, self.wo, self.wgu, self.wdown]
        self.ffn = ffn
        self.rope = rope
        if rope:
            inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
            ang = torch.outer(torch.arange(seqlen, device=device, dtype=torch.float32), inv)  # (s, d/2)
            ang = torch.cat([ang, ang], dim=-1)
            self.cos = ang.cos().to(dtype)[None, :, None, :]  # (1, s, 1, d)
            self.sin = ang.sin().to(dtype)[None, :, None, :]

    def apply_rope(self, t):  # (b, s, h, d), rotate-half convention (LLaMA HF)
        d2 = t.shape[-1] // 2
        rot = torch.cat([-t[..., d2:], t[..., :d2]], dim=-1)
        return t * self.cos + rot * self.sin

    def forward(self, x, attn):
        b, s, H = x.shape
        hq, hkv, d = self.hq, self.hkv, self.d
        y = F.rms_norm(x, (H,), self.norm1, eps=1e-5)
        qkv = F.linear(y, self.wqkv).view(b, s, hq + 2 * hkv, d)
        q, k, v = qkv.split([hq, hkv, hkv], dim=2)  # (b, s, h, d) strided views
        if self.rope:
            q, k = self.apply_rope(q), self.apply_rope(k)
        o = attn(q, k, v)  # (b, s, hq, d), any strides
        h = x + F.linear(o.reshape(b, s, hq * d), self.wo)
        y2 = F.rms_norm(h, (H,), self.norm2, eps=1e-5)
        gate, up = F.linear(y2, self.wgu).split([self.ffn, self.ffn], dim=-1)
        return h + F.linear(F.silu(gate) * up, self.wdown)


def make_attn(name, seqlen, hq, hkv, device, state):
    """attn(q, k, v) on (b, s, h, d) -> (b, s, hq, d), ctx factory, notes."""
    null = contextlib.nullcontext
    notes = {}
    if name in ("dash_det", "dash_atomic") and state.get("fake_dash"):
        def attn(q, k, v):  # --fake-dash (self-test of this script without the extension)
            return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                  is_causal=True, enable_gqa=True).transpose(1, 2)
        notes["fake"] = True
        return attn, null, notes
    if name in ("dash_det", "dash_atomic"):
        import dash_attn
        if not dash_attn.has_extension():
            dash_attn._ops.extension()  # raises the ImportError with the hint
        det = name == "dash_det"
        sched = "auto" if det else "atomic"

        def attn(q, k, v):
            return dash_attn.attention(q, k, v, causal=True, schedule=sched, deterministic=det)
        notes.update(schedule=sched, deterministic=det)
        return attn, null, notes
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if name in ("sdpa_detmode", "cudnn", "flash"):
        backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}.get(name)
        gqa = state.get(name + ":gqa", "native")
        rep = hq // hkv

        def attn(q, k, v):
            qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            kw = {}
            if rep > 1:
                if gqa == "native":
                    kw["enable_gqa"] = True
                else:
                    kt, vt = kt.repeat_interleave(rep, dim=1), vt.repeat_interleave(rep, dim=1)
            with (sdpa_kernel(backend) if backend is not None else null()):
                o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True, **kw)
            return o.transpose(1, 2)
        notes["gqa"] = gqa
        if name == "sdpa_detmode":
            fill = state["fill_uninitialized"]
            notes["det_mode"] = True
            return attn, (lambda: det_mode(True, warn_only=False, fill_uninitialized=fill)), notes
        return attn, null, notes
    if name == "flex":
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        if "flex_compiled" not in state:
            state["flex_compiled"] = torch.compile(flex_attention, dynamic=False)
        fc = state["flex_compiled"]

        def causal_mask(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx
        bm = create_block_mask(causal_mask, None, None, seqlen, seqlen, device=device)

        def attn(q, k, v):
            o = fc(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), block_mask=bm, enable_gqa=hq != hkv)
            return o.transpose(1, 2)
        return attn, null, notes
    raise ValueError(f"unknown implementation {name!r} (known: {', '.join(IMPLS)})")


def grad_bits(ts):
    return [t.view(torch.int16) if t.element_size() == 2 else t.view(torch.int32) for t in ts]


def attn_kernels(step, device):
    """Names of the attention-looking GPU kernels one step launches (which SDPA backend ran)."""
    if device.type != "cuda":
        return None
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    pat = ("flash", "fmha", "attn", "attention", "sdpa", "cudnn", "softmax", "flex", "triton_tem", "bmm", "baddbmm")
    names = {e.key for e in prof.key_averages()}
    return sorted({n[:140] for n in names if any(p_ in n.lower() for p_ in pat)})[:16]


def run(name, blk, x, dout, args, state, timer):
    res = {"name": name}
    t0 = time.perf_counter()
    wrec = []
    try:
        with warnings.catch_warnings(record=True) as wrec:
            warnings.simplefilter("always")
            attn, ctx, notes = make_attn(name, x.shape[1], blk.hq, blk.hkv, x.device, state)
            res.update(notes)
            leaves = [x] + blk.params

            def step():
                for t in leaves:
                    t.grad = None
                with ctx():
                    out = blk.forward(x, attn)
                    out.backward(dout)

            def grads():
                return [t.grad for t in leaves]

            step()  # first step: compiles / plans, off the clock
            timer.sync()
            res["first_step_s"] = round(time.perf_counter() - t0, 3)
            ref = [b.clone() for b in grad_bits(grads())]
            mism = torch.zeros((), dtype=torch.int64, device=x.device)
            n = 1
            for _ in range(args.warmup):
                step()
                for a, b in zip(grad_bits(grads()), ref):
                    mism += (a != b).sum()
                n += 1
            timer.sync()
            ts = []
            for _ in range(args.reps):
                st = timer.start()
                step()
                ts.append(timer.stop(st))
                for a, b in zip(grad_bits(grads()), ref):
                    mism += (a != b).sum()
                n += 1
            timer.sync()
            ms = [timer.ms(p) for p in ts]
            del ref
            if args.profile_kernels and (name == "sdpa_detmode" or not state.get(name + ":profiled")):
                state[name + ":profiled"] = True
                try:
                    res["attn_kernels"] = attn_kernels(step, x.device)
                except Exception as e:  # noqa: BLE001
                    res["attn_kernels_error"] = short(e)
        res["ms"] = statistics.median(ms)
        res["ms_all"] = [round(m, 3) for m in ms]
        res["det_runs"] = n
        res["det_mismatch_elems"] = int(mism.item())
        res["det_step"] = res["det_mismatch_elems"] == 0
    except Exception as e:  # noqa: BLE001
        res["error"] = short(e)
        if args.verbose:
            traceback.print_exc()
        try:
            timer.sync()
        except Exception as e2:  # noqa: BLE001
            res["error"] += " | sync after error: " + short(e2, 200)
    finally:
        for t in [x] + blk.params:
            t.grad = None
    wl = sorted({f"{w.category.__name__}: {str(w.message)[:300]}" for w in (wrec or [])})
    if wl:
        res["warnings"] = wl
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="llama3-8b,qwen2.5-7b", help=f"comma-separated: {', '.join(MODELS)}")
    ap.add_argument("--seqlens", default="4096,8192")
    ap.add_argument("--tokens", type=int, default=16384, help="tokens per step: batch = tokens / seqlen")
    ap.add_argument("--impls", default=",".join(IMPLS), help=f"comma-separated subset of: {', '.join(IMPLS)}")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--no-rope", action="store_true", help="leave RoPE out of the block")
    ap.add_argument("--fill-uninitialized", action="store_true",
                    help="keep torch.utils.deterministic.fill_uninitialized_memory=True in det mode "
                         "(PyTorch's default: fills every torch.empty of the step). Default: off")
    ap.add_argument("--budget-s", type=float, default=0.0, help="stop starting new configs after this many s")
    ap.add_argument("--recompile-limit", type=int, default=1000)
    ap.add_argument("--json", default=None)
    ap.add_argument("--device", default="cuda", help="cuda; 'cpu' only for dry runs of this script")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16", "fp32"), help=argparse.SUPPRESS)
    ap.add_argument("--scale-down", type=int, default=1, help=argparse.SUPPRESS)  # dry runs: shrink models
    ap.add_argument("--no-profile", dest="profile_kernels", action="store_false",
                    help="skip the one profiled step that records which attention kernels ran")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--fake-dash", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.json and os.path.dirname(args.json):
        os.makedirs(os.path.dirname(args.json), exist_ok=True)

    models = csv_strs(args.models)
    for m in models:
        if m not in MODELS:
            ap.error(f"unknown model {m!r}; known: {', '.join(MODELS)}")
    impls = csv_strs(args.impls)
    for n in impls:
        if n not in IMPLS:
            ap.error(f"unknown implementation {n!r}; known: {', '.join(IMPLS)}")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("[e2e] no CUDA device (use --device cpu for a dry run)")
        return 2
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    raise_recompile_limits(args.recompile_limit)

    meta = machine_info()
    meta["args"] = vars(args)
    meta["CUBLAS_WORKSPACE_CONFIG"] = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    meta["conventions"] = {
        "step": "forward + out.backward(dout) of one block, grads of x and all weights, no optimizer",
        "ms": "CUDA-event median per step", "speedup_vs_X": "ms(X) / ms(dash_det)",
        "det_step": "x.grad and every weight grad bitwise equal over det_runs steps",
        "det_mode": f"sdpa_detmode only; fill_uninitialized_memory={bool(args.fill_uninitialized)}",
    }
    print(f"[e2e] {meta.get('gpu')}, torch {meta['torch']}, cudnn {meta['cudnn']}, commit {meta['commit']}, "
          f"{meta['date_utc']} UTC; impls {', '.join(impls)}; warmup {args.warmup}, reps {args.reps}", flush=True)
    state = {"fill_uninitialized": bool(args.fill_uninitialized), "fake_dash": bool(args.fake_dash)}
    timer = Timer(device)
    results, skipped, fatal = [], [], None
    t_start = time.perf_counter()

    def dump():
        if args.json:
            with open(args.json + ".tmp", "w") as f:
                json.dump({"meta": meta, "results": results, "skipped": skipped, "fatal": fatal,
                           "elapsed_s": round(time.perf_counter() - t_start, 1)}, f, indent=1)
            os.replace(args.json + ".tmp", args.json)

    for model in models:
        cfg = dict(MODELS[model])
        if args.scale_down > 1:
            for kk in ("hidden", "heads", "kv_heads", "ffn"):
                cfg[kk] //= args.scale_down
        for s in csv_ints(args.seqlens):
            if fatal or (args.budget_s and time.perf_counter() - t_start > args.budget_s):
                skipped.append({"model": model, "seqlen": s, "why": "fatal error earlier" if fatal else "time budget"})
                continue
            b = max(1, args.tokens // s)
            row = {"model": model, **cfg, "seqlen": s, "batch": b, "rope": not args.no_rope, "impls": {}}
            print(f"\n[e2e] {model} seqlen {s} batch {b}", flush=True)
            try:
                blk = Block(cfg, s, device, dtype, rope=not args.no_rope)
                g = torch.Generator(device=device).manual_seed(1)
                x = torch.randn(b, s, cfg["hidden"], device=device, dtype=dtype, generator=g).requires_grad_(True)
                dout = torch.randn(b, s, cfg["hidden"], device=device, dtype=dtype, generator=g)
            except Exception as e:  # noqa: BLE001
                row["error"] = short(e)
                results.append(row)
                dump()
                continue
            for name in impls:
                r = run(name, blk, x, dout, args, state, timer)
                if name in ("cudnn", "flash", "sdpa_detmode") and "error" in r and cfg["heads"] != cfg["kv_heads"] \
                        and state.get(name + ":gqa", "native") == "native" and not is_fatal_cuda_error(r["error"]):
                    first = r["error"]
                    state[name + ":gqa"] = "expand"  # backend refused enable_gqa: expand k/v instead
                    r = run(name, blk, x, dout, args, state, timer)
                    r["native_gqa_error"] = first
                row["impls"][name] = r
                if "error" in r:
                    print(f"  {name:14s} ERROR {r['error']}", flush=True)
                    if is_fatal_cuda_error(r["error"]):
                        fatal = f"{name} {model} s={s}: {r['error']}"
                        break
                else:
                    print(f"  {name:14s} {r['ms']:8.2f} ms/step  det_step {r['det_step']} ({r['det_runs']} steps)"
                          f"  first step {r['first_step_s']}s", flush=True)
            base = row["impls"].get("dash_det", {}).get("ms")
            row["speedup_vs"] = {n: (r["ms"] / base if base and "ms" in r else None)
                                 for n, r in row["impls"].items() if n != "dash_det"}
            results.append(row)
            del blk, x, dout
            if device.type == "cuda" and not fatal:
                torch.cuda.empty_cache()
            dump()

    # table
    print("\nms per step (forward + backward of one block, 16k tokens); speedup = ms(X) / ms(dash_det); "
          "* = all grads bitwise equal over the steps, ! = differed")
    hdr = ["model", "seqlen"] + list(impls) + [f"vs {n}" for n in impls if n != "dash_det"]
    w = [11, 6] + [max(10, len(h)) for h in hdr[2:]]
    print("  ".join(h.rjust(wi) for h, wi in zip(hdr, w)))
    for row in results:
        cells = [row["model"], str(row["seqlen"])]
        for n in impls:
            r = row["impls"].get(n)
            cells.append("" if r is None else ("E" if "error" in r else f"{r['ms']:.2f}" + ("*" if r["det_step"] else "!")))
        for n in impls:
            if n == "dash_det":
                continue
            sp = row.get("speedup_vs", {}).get(n)
            cells.append("-" if sp is None else f"{sp:.3f}x")
        print("  ".join(c.rjust(wi) for c, wi in zip(cells, w)))
    errs = [(row["model"], row["seqlen"], n, r["error"]) for row in results for n, r in row["impls"].items()
            if "error" in r]
    for e in errs:
        print(f"  error {e[0]} s={e[1]} {e[2]}: {e[3]}")
    if skipped:
        print(f"[e2e] skipped: {skipped}")
    dump()
    if args.json:
        print(f"[e2e] JSON: {args.json}")
    print(f"[e2e] total {time.perf_counter() - t_start:.1f}s")
    return 1 if fatal else 0


if __name__ == "__main__":
    sys.exit(main())
