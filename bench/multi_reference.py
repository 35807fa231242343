#!/usr/bin/env python3
"""The PyTorch references for gpuscope's data-parallel measurements, on the GPU machine.

  torchrun --nproc-per-node N bench/multi_reference.py train --model vit_b16 --batch 160
      DistributedDataParallel (bucket_cap_mb 25, as gpuscope-torch) over timm's
      vit_base_patch16_224, torchvision's resnet50 (channels-last) or a plain PyTorch GPT-2 small
      (bench/torch_vs_timm.py's), AMP bf16, AdamW(fused=True), synthetic batches on the GPU
      (each rank its own), timed as gpuscope-torch times: warm-up steps, then windows of steps
      between CUDA events, samples/s the median over windows. Rank 0 prints one JSON line:
      samples/s of the job (sum over ranks), per rank, peak memory per rank.
      --comm-hook bf16: DDP's bf16_compress_hook registered (gradients cast to bf16, divided by
      the world size, all-reduced in bf16, cast back), as gpuscope-torch --grad-comm bf16.
  torchrun --nproc-per-node N bench/multi_reference.py allreduce
      torch.distributed.all_reduce (NCCL, sum, float32) over sizes 1 MiB .. 1 GiB: algbw =
      bytes / time, busbw = algbw * 2(n-1)/n (nccl-tests' definition). One JSON line per size.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_vs_timm import loss_of, python_batch, python_model  # noqa: E402


def train(args, rank, world, local_rank):
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    channels_last = args.model == "resnet50"
    model = python_model(args.model).cuda()
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank],
                                                    bucket_cap_mb=25)
    if args.comm_hook == "bf16":
        ddp.register_comm_hook(None, default_hooks.bf16_compress_hook)
    torch.manual_seed(1000003 * rank)
    inputs = [python_batch(args.model, args.batch, torch.float32, args.seq_len, channels_last)
              for _ in range(2)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=True)

    def step(x, y):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of(args.model, ddp(x), y)
        loss.backward()
        optimizer.step()

    for i in range(args.warmup):
        step(*inputs[i % 2])
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    rates, i = [], args.warmup
    for _ in range(args.windows):
        events = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
        events[0].record()
        for s in range(args.steps):
            step(*inputs[i % 2])
            events[s + 1].record()
            i += 1
        events[-1].synchronize()
        seconds = sum(events[s].elapsed_time(events[s + 1]) for s in range(args.steps)) / 1e3
        rates.append(args.batch * args.steps / seconds)
    mine = torch.tensor([statistics.median(rates), torch.cuda.max_memory_allocated(),
                         torch.cuda.max_memory_reserved()], dtype=torch.float64, device="cuda")
    every = [torch.zeros_like(mine) for _ in range(world)]
    dist.all_gather(every, mine)
    if rank == 0:
        ranks = [{"rank": r, "samples_per_second": float(t[0]),
                  "peak_allocated_bytes": int(t[1]), "peak_reserved_bytes": int(t[2])}
                 for r, t in enumerate(every)]
        print(json.dumps({"type": "reference", "model": args.model, "batch": args.batch,
                          "world_size": world, "comm_hook": args.comm_hook,
                          "samples_per_second": sum(r["samples_per_second"] for r in ranks),
                          "ranks": ranks}), flush=True)


def allreduce(args, rank, world):
    sizes = [1 << s for s in range(20, 31, args.size_step)]
    buffer = torch.ones(sizes[-1] // 4, dtype=torch.float32, device="cuda")
    for size in sizes:
        t = buffer[: size // 4]
        iters = max(5, min(50, (1 << 33) // size))
        for _ in range(5):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        dist.barrier()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            dist.all_reduce(t)
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3 / iters
        algbw = size / seconds
        if rank == 0:
            print(json.dumps({"type": "allreduce", "bytes": size, "world_size": world,
                              "seconds": seconds, "algbw": algbw,
                              "busbw": algbw * 2 * (world - 1) / world}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["train", "allreduce"])
    parser.add_argument("--model", default="vit_b16")
    parser.add_argument("--batch", type=int, default=160)
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--size-step", type=int, default=1, help="powers of two between sizes")
    parser.add_argument("--comm-hook", choices=["none", "bf16"], default="none",
                        help="train: DDP's default all-reduce, or its bf16_compress_hook")
    args = parser.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    try:
        if args.what == "train":
            train(args, rank, world, local_rank)
        else:
            allreduce(args, rank, world)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
