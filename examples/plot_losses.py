#!/usr/bin/env python
"""Loss curves of training runs (issue 6, item 4): examples/train_llama.py's losses.jsonl files.

Top panel: loss per step of every run. Bottom panel: each run's loss minus the first run's
(the reference), on a symmetric-log scale, so that a bit-identical run is a flat zero line and a
non-deterministic one shows where and how far it drifts. Needs matplotlib.

  python examples/plot_losses.py --run dash_a=runs/repro/1gpu_dash_a/losses.jsonl \
      --run dash_b=runs/repro/1gpu_dash_b/losses.jsonl \
      --run cudnn_a=runs/repro/1gpu_sdpa_cudnn_a/losses.jsonl --out losses.png

Ran on the logs of the 2 x H200 run at d1ffa51 (docs/data/repro-h200x2-d1ffa51/losses.png).
"""
from __future__ import annotations

import argparse
import json
import sys


def load(path):
    steps, losses = [], []
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                steps.append(r["step"])
                losses.append(r["loss"])
    return steps, losses


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", action="append", required=True, metavar="LABEL=PATH",
                   help="a run's losses.jsonl; the first one is the reference of the difference panel")
    p.add_argument("--out", default="losses.png")
    p.add_argument("--title", default="train_llama.py: loss per step")
    args = p.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = []
    for spec in args.run:
        label, sep, path = spec.partition("=")
        if not sep:
            label, path = spec, spec
        runs.append((label, *load(path)))

    fig, (ax, axd) = plt.subplots(2, 1, figsize=(9, 7), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    styles = ["-", "--", "-", ":", "-.", "-"]
    for i, (label, steps, losses) in enumerate(runs):
        ax.plot(steps, losses, styles[i % len(styles)], lw=1.2, label=label, alpha=0.85)
    ax.set_ylabel("training loss (nats / byte)")
    ax.set_title(args.title)
    ax.grid(alpha=0.3)
    ax.legend()

    ref_label, ref_steps, ref_losses = runs[0]
    ref = dict(zip(ref_steps, ref_losses))
    for i, (label, steps, losses) in enumerate(runs[1:], start=1):
        xs = [s for s in steps if s in ref]
        d = [l - ref[s] for s, l in zip(steps, losses) if s in ref]
        n_diff = sum(1 for v in d if v != 0.0)
        axd.plot(xs, d, styles[i % len(styles)], lw=1.2, color=f"C{i}",
                 label=f"{label} - {ref_label} ({n_diff} of {len(d)} steps differ)")
    axd.set_yscale("symlog", linthresh=1e-6)
    axd.axhline(0.0, color="k", lw=0.6)
    axd.set_xlabel("step")
    axd.set_ylabel("loss difference")
    axd.grid(alpha=0.3)
    if len(runs) > 1:
        axd.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
