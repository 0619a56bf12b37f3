"""Training-step time of two (or more) attentions in ONE process, interleaved.

examples/train_llama.py measures one attention per process; two processes run minutes apart on
a GPU whose clocks and neighbours change, and on the H200 the same configuration has scattered
by 10-15% between runs (docs/training.md). Here every attention trains its own copy of the same
model (same seed, same batches) and the copies take turns in blocks of steps, in the order
A B B A A B ... (each attention goes first as often as last), so a drift of the machine hits
all of them alike. Per step: a CUDA event at the start and one at the end on the current
stream (no synchronisation inside a block), so a step's time includes any GPU idle time the
host causes (launch overhead is part of what is compared).

  python examples/step_time_ab.py --attns dash,sdpa_cudnn --blocks 8 --steps-per-block 10
  torchrun --nproc_per_node 2 examples/step_time_ab.py --attns dash,sdpa_cudnn   # DDP (issue 6's 2-GPU target)

Under torchrun (or --dist ddp) every attention's copy is wrapped in DDP as in train_llama.py
(same bucket size, same data shard per rank, dash's backward on all but NCCL_SMS SMs unless
--num-ctas says otherwise); the ranks meet at every block boundary; rank 0 prints and writes.

Prints per attention the median / mean / min step time and tokens/s from the median, its
median step time over the first attention's, and the per-block medians (to see drift);
--json writes all of it. Settings as in train_llama.py (deterministic algorithms on in
warn-only mode for all attentions alike: cuDNN's backward has no deterministic variant).
--device cpu with --preset tiny and the sdpa attentions is a smoke test of this script.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_llama as tl  # noqa: E402  (sets the determinism environment before torch starts)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attns", default="dash,sdpa_cudnn",
                   help=f"comma-separated, from {', '.join(tl.ATTNS)}; ratios are against the first")
    p.add_argument("--preset", choices=tuple(tl.PRESETS), default="base")
    p.add_argument("--seqlen", type=int, default=2048)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--blocks", type=int, default=8, help="turns per attention")
    p.add_argument("--steps-per-block", type=int, default=10)
    p.add_argument("--warmup-steps", type=int, default=5, help="untimed steps per attention before the first block")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--no-fill-uninitialized", action="store_true")
    p.add_argument("--dist", choices=("none", "ddp"), default=None,
                   help="default: ddp under torchrun (WORLD_SIZE > 1), else none")
    p.add_argument("--num-ctas", type=int, default=-1,
                   help="dash backward grid; -1: all SMs, or all but NCCL_SMS under DDP (as train_llama.py)")
    p.add_argument("--bucket-mb", type=int, default=25, help="DDP bucket_cap_mb (as train_llama.py)")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    args.attns = [a for a in args.attns.split(",") if a]
    for a in args.attns:
        if a not in tl.ATTNS:
            p.error(f"--attns: unknown attention {a!r} (choose from {', '.join(tl.ATTNS)})")
    if len(set(args.attns)) != len(args.attns):
        p.error("--attns: each attention once")
    if args.blocks < 1 or args.steps_per_block < 1:
        p.error("--blocks and --steps-per-block must be >= 1")
    if any(a.startswith("dash") for a in args.attns) and args.device != "cuda":
        p.error("dash_attn needs --device cuda")
    return args


def block_order(names, b):
    """A B, B A, A B, ...: each attention leads as often as it trails."""
    return list(names) if b % 2 == 0 else list(reversed(names))


def main(argv=None):
    args = parse_args(argv)
    cfg = dict(tl.PRESETS[args.preset])
    args.dist = tl.resolve_dist(args.dist, 29518, modes="--dist ddp")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    # warn-only for every attention alike: cuDNN's backward has no deterministic variant
    tl.deterministic_torch(strict=False, fill_uninitialized=not args.no_fill_uninitialized)
    device, rank, world = tl.setup_device(args.device, args.dist,
                                          "use --device cpu --preset tiny --attns sdpa for a smoke test")
    is_main = rank == 0
    cdtype = torch.bfloat16
    num_ctas = tl.backward_num_ctas(args.num_ctas, args.dist, device)  # as train_llama.py

    corpus = tl.make_corpus(4_000_000, args.seed)
    data = tl.Batches(corpus, args.seqlen, args.batch, rank, world, args.seed)
    runs = {}
    for name in args.attns:
        impl = tl.AttnImpl(name, num_ctas=num_ctas)
        impl.gqa = tl.probe_sdpa_gqa(impl, cfg, args.seqlen, device, cdtype)
        torch.manual_seed(args.seed)
        model = tl.Llama(cfg, impl, args.seqlen, cdtype).to(device)
        if args.dist == "ddp":
            model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None,
                        bucket_cap_mb=args.bucket_mb, gradient_as_bucket_view=True,
                        broadcast_buffers=False, find_unused_parameters=False)
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), foreach=True)
        runs[name] = {"model": model, "opt": opt, "step": 0, "ms": [], "block_ms": [], "blocks": []}

    def step(run):
        x, y = data.get(run["step"])
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast(device.type, dtype=cdtype):
            logits = run["model"](x)
        loss = F.cross_entropy(logits.float().view(-1, tl.VOCAB), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(run["model"].parameters(), 1.0, foreach=True)
        run["opt"].step()
        run["opt"].zero_grad(set_to_none=True)
        run["step"] += 1
        return loss

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if args.dist == "ddp":
            dist.barrier()  # the ranks start every block together

    mark, span_ms = tl.step_timer(device)

    for name in args.attns:
        for _ in range(args.warmup_steps):
            step(runs[name])
        sync()
    for b in range(args.blocks):
        for name in block_order(args.attns, b):
            run = runs[name]
            t_wall, t0 = time.time(), time.perf_counter()
            marks = [mark()]
            for _ in range(args.steps_per_block):
                step(run)
                marks.append(mark())
            t_enq = time.perf_counter()
            sync()  # the block's events are complete; the next attention starts on an idle GPU
            t1 = time.perf_counter()
            ms = [span_ms(x, y) for x, y in zip(marks, marks[1:])]
            run["ms"] += ms
            run["block_ms"].append(statistics.median(ms))
            # Host side of the block: when it started (unix time, to join with a clock / power log),
            # how long the host took to enqueue it, and until the GPU finished. Enqueue time close to
            # the block's GPU time means the host, not the GPU, set the pace.
            run["blocks"].append({"round": b, "t_start": round(t_wall, 3), "enqueue_s": round(t_enq - t0, 4),
                                  "wall_s": round(t1 - t0, 4), "gpu_ms_sum": round(sum(ms), 3)})

    tokens = args.batch * args.seqlen * world
    first = args.attns[0]
    ref = statistics.median(runs[first]["ms"])
    result = {"attns": args.attns, "preset": args.preset, "model": cfg, "seqlen": args.seqlen, "batch": args.batch,
              "blocks": args.blocks, "steps_per_block": args.steps_per_block, "device": str(device),
              "dist": args.dist, "world": world, "num_ctas": num_ctas,
              "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
              "commit": tl.git_commit(), "results": {}}
    log = print if is_main else (lambda *a, **k: None)
    log(f"[step_time_ab] {result['gpu'] or 'cpu'}, {args.preset} {cfg}, batch {args.batch} x {args.seqlen}"
        f"{f' per rank, {world} ranks (DDP), dash num_ctas {num_ctas}' if args.dist == 'ddp' else ''}, "
        f"{args.blocks} blocks x {args.steps_per_block} steps per attention, order A B / B A alternating")
    for name in args.attns:
        ms = runs[name]["ms"]
        med = statistics.median(ms)
        # p10: the lower decile. On the H200 hosts the step times are bimodal (blocks at ~54 ms and
        # at 60-80 ms for every attention alike, docs/training.md run 7); the median depends on how
        # many blocks fell in the slow mode, the lower decile on the attention's own speed.
        p10 = sorted(ms)[len(ms) // 10]
        r = {"median_ms": med, "mean_ms": statistics.fmean(ms), "min_ms": min(ms), "max_ms": max(ms), "p10_ms": p10,
             "tokens_per_s_median": tokens / (med / 1e3), "time_vs_first": med / ref,
             "p10_vs_first": p10 / sorted(runs[first]["ms"])[len(runs[first]["ms"]) // 10],
             "block_median_ms": runs[name]["block_ms"], "steps": len(ms), "step_ms": [round(x, 3) for x in ms],
             "blocks": runs[name]["blocks"]}
        result["results"][name] = r
        log(f"  {name:<14} median {med:8.2f} ms  mean {r['mean_ms']:8.2f}  min {r['min_ms']:8.2f}  p10 {p10:8.2f}  "
              f"tokens/s {r['tokens_per_s_median']:9.0f}  time / {first}'s: {r['time_vs_first']:.3f} (p10 {r['p10_vs_first']:.3f})  "
              f"blocks {' '.join(f'{x:.1f}' for x in r['block_median_ms'])}")
    if args.json and is_main:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.dist == "ddp":
        dist.destroy_process_group()
    return result


if __name__ == "__main__":
    main()
