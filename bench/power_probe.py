#!/usr/bin/env python3
"""Steady-state backward at the power cap: speed, SM clock and energy per FLOP, ours against cuDNN.

peers.py times short bursts; on an H100 / H200 (700 W) the long backward shapes run at the power
cap's clock there (docs/perf.md v38 item 3), for every implementation. At the cap the ratio of two
kernels' speeds is no longer the ratio of their work per clock: it is set by how much work each does
per joule. This probe runs each implementation's backward back to back for a fixed time (one forward,
then `torch.autograd.grad(..., retain_graph=True)` repeated; no host sync inside the window) and reads
NVML's energy counter around the window and the SM clock / power every 20 ms inside it, so that
each row gives

  TFLOP/s (FlashAttention's convention: backward = 2.5 x 4 b h s^2 d, halved for causal),
  the mean power (energy / time), TFLOP per joule (= TFLOP/s per watt),
  the median SM clock of the window's second half and TFLOP per giga-cycle (= TFLOP/s / GHz: the
  work per clock, which would be the speed at a fixed clock).

Implementations alternate (A B C, then C B A) so that the GPU's thermal drift falls on all of them.
The implementations are peers.py's (its make_impl and names: cudnn, flash, flex, their _detmode variants,
dash:SCHEDULE), so that the two time the same calls. NVML is read through ctypes (libnvidia-ml.so.1,
present wherever nvidia-smi is); --dry-run runs a tiny shape on the CPU without NVML, math SDPA standing in
for dash (a self-test of the script: tests/python/test_power_probe.py).

  python bench/power_probe.py --hdim 128 --shapes full:8192,causal:8192 --impls cudnn,dash:auto --json out.json
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402  (the implementations peers.py times: make_impl, so that both measure the same calls)


class Nvml:
    """The few NVML calls the probe needs (energy counter in mJ, SM clock in MHz, power in mW)."""
    NVML_CLOCK_SM = 1

    def __init__(self, index=0):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self._check(self.lib.nvmlInit_v2(), "nvmlInit_v2")
        self.h = ctypes.c_void_p()
        self._check(self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(self.h)),
                    "nvmlDeviceGetHandleByIndex_v2")

    @staticmethod
    def _check(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} returned NVML error {rc}")

    def energy_mj(self):
        e = ctypes.c_ulonglong()
        self._check(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.h, ctypes.byref(e)),
                    "nvmlDeviceGetTotalEnergyConsumption")
        return e.value

    def sm_mhz(self):
        c = ctypes.c_uint()
        self._check(self.lib.nvmlDeviceGetClockInfo(self.h, self.NVML_CLOCK_SM, ctypes.byref(c)), "nvmlDeviceGetClockInfo")
        return c.value

    def power_mw(self):
        c = ctypes.c_uint()
        self._check(self.lib.nvmlDeviceGetPowerUsage(self.h, ctypes.byref(c)), "nvmlDeviceGetPowerUsage")
        return c.value


class Sampler:
    """(t, SM MHz, power W) every `period` s in a thread while running (ctypes releases the GIL)."""

    def __init__(self, nvml, period=0.02):
        self.nvml, self.period, self.samples = nvml, period, []
        self._stop = threading.Event()
        self._t = None

    def __enter__(self):
        if self.nvml is not None:
            self._t = threading.Thread(target=self._run, daemon=True)
            self._t.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), self.nvml.sm_mhz(), self.nvml.power_mw() / 1e3))
            time.sleep(self.period)

    def __exit__(self, *exc):
        self._stop.set()
        if self._t is not None:
            self._t.join()


def check_impl(name):
    if name not in peers.ALL_IMPLS:
        raise SystemExit(f"--impls: unknown implementation {name!r} (known: {', '.join(peers.ALL_IMPLS)})")


def bwd_flops(b, h, s, d, causal):
    f = 4.0 * b * h * s * s * d
    return 2.5 * (f / 2 if causal else f)


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def run_phase(name, causal, tensors, dev, nvml, seconds, flops, state):
    q, k, v, dout = tensors
    attn, ctx, _ = peers.make_impl(name, causal, q.shape[1], dev, state)
    with ctx():
        o = attn(q, k, v)

    def step():
        with ctx():
            return torch.autograd.grad(o, (q, k, v), dout, retain_graph=True)
    for _ in range(3):  # warm-up (and the first call's setup)
        step()
    sync(dev)
    t = time.perf_counter()
    for _ in range(3):
        step()
    sync(dev)
    per = max((time.perf_counter() - t) / 3, 1e-6)
    n = max(3, int(seconds / per))
    e0 = nvml.energy_mj() if nvml else None
    with Sampler(nvml) as smp:
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        sync(dev)
        t1 = time.perf_counter()
    e1 = nvml.energy_mj() if nvml else None
    dt = t1 - t0
    row = {"impl": name, "iters": n, "seconds": dt, "ms": dt / n * 1e3, "tflops": flops * n / dt / 1e12}
    if nvml is not None:
        watts = (e1 - e0) / 1e3 / dt
        late = [s for s in smp.samples if s[0] >= t0 + dt / 2] or smp.samples
        mhz = statistics.median(s[1] for s in late) if late else float("nan")
        row.update(watts=watts, tflop_per_j=row["tflops"] / watts, sm_mhz_median=mhz,
                   sm_mhz_min=min((s[1] for s in late), default=float("nan")),
                   power_w_median=statistics.median(s[2] for s in late) if late else float("nan"),
                   tflop_per_gcycle=row["tflops"] / (mhz / 1e3), samples=len(smp.samples))
    del o
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hdim", type=int, default=128)
    ap.add_argument("--tokens", type=int, default=16384, help="batch x seqlen (the standard sweep: 16k)")
    ap.add_argument("--hidden", type=int, default=2048, help="heads x head_dim")
    ap.add_argument("--shapes", default="full:8192,causal:8192,full:16384,causal:16384",
                    help="comma-separated MASK:SEQLEN")
    ap.add_argument("--impls", default="cudnn,dash:auto,dash:atomic")
    ap.add_argument("--seconds", type=float, default=2.5, help="length of each timed window")
    ap.add_argument("--passes", type=int, default=2, help="passes over the implementations (alternating order)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--dry-run", action="store_true", help="CPU, tiny shape, no NVML (self-test)")
    a = ap.parse_args(argv)

    dev = torch.device("cpu" if a.dry_run else "cuda")
    dtype = torch.float32 if a.dry_run else torch.bfloat16
    nvml = None if a.dry_run else Nvml(torch.cuda.current_device())
    impls = a.impls.split(",")
    for name in impls:
        check_impl(name)  # unknown names fail here, before any GPU time is spent
    shapes = []
    for item in a.shapes.split(","):
        mask, _, s = item.partition(":")
        if mask not in ("full", "causal") or not s.isdigit():
            ap.error(f"--shapes: {item!r} is not MASK:SEQLEN with MASK full or causal")
        shapes.append((mask == "causal", int(s)))
    if a.hidden % a.hdim:
        ap.error(f"--hidden {a.hidden} is not a multiple of --hdim {a.hdim}")
    h = a.hidden // a.hdim
    out = {"gpu": None if a.dry_run else torch.cuda.get_device_name(), "hdim": a.hdim, "rows": []}
    # peers.make_impl's state, as peers.py's defaults: --dry-run stands math SDPA in for dash (peers'
    # --fake-dash); det mode without fill_uninitialized_memory; FlexAttention compiled once
    state = {"fake_dash": a.dry_run, "fill_uninitialized": False}
    gen = torch.Generator(device=dev).manual_seed(0)
    for causal, s in shapes:
        b = max(1, a.tokens // s)
        mk = lambda: torch.randn(b, s, h, a.hdim, device=dev, dtype=dtype, generator=gen)  # noqa: E731
        q, k, v = (mk().requires_grad_() for _ in range(3))
        dout = mk()
        fl = bwd_flops(b, h, s, a.hdim, causal)
        for p in range(a.passes):
            for name in (impls if p % 2 == 0 else impls[::-1]):
                try:
                    r = run_phase(name, causal, (q, k, v, dout), dev, nvml, a.seconds, fl, state)
                except Exception as e:  # noqa: BLE001 (recorded, the others still run)
                    r = {"impl": name, "error": f"{type(e).__name__}: {str(e)[:300]}"}
                r.update(mask="causal" if causal else "full", seqlen=s, batch=b, heads=h, pass_=p)
                out["rows"].append(r)
                print(json.dumps(r), flush=True)
        del q, k, v, dout
    # summary: per shape and implementation the mean over passes; ratios against the first impl
    print(f"\nhdim {a.hdim}: mean of {a.passes} passes; ratios = impl / {impls[0]}")
    keys = ["tflops", "sm_mhz_median", "watts", "tflop_per_j", "tflop_per_gcycle"]
    for causal, s in shapes:
        mask = "causal" if causal else "full"
        agg = {}
        for name in impls:
            rs = [r for r in out["rows"] if r["mask"] == mask and r["seqlen"] == s and r["impl"] == name and "error" not in r]
            if rs:
                agg[name] = {k: statistics.mean(r[k] for r in rs) for k in keys if all(k in r for r in rs)}
        base = agg.get(impls[0], {})
        for name, m in agg.items():
            cells = "  ".join(f"{k} {m[k]:.4g}" + (f" ({m[k] / base[k]:.3f})" if k in base and base[k] else "")
                              for k in keys if k in m)
            print(f"{mask:6s} {s:6d} {name:16s} {cells}")
        out.setdefault("summary", []).extend({"mask": mask, "seqlen": s, "impl": n, **m} for n, m in agg.items())
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if all("error" not in r for r in out["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
