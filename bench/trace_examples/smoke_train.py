#!/usr/bin/env python3
"""A small PyTorch training loop that exercises what libgpuscope_inject.so records.

Run by bench/trace_device.sh on the GPU machine, with and without the injection library:
a conv + MLP model trained for --steps steps on random data from a DataLoader (worker
processes, pinned memory), with

  - torch.cuda.nvtx.mark("gpuscope.step") after every optimizer step (the step convention),
  - an NVTX range "gpuscope.data_wait" around each DataLoader __next__ (as the shim does),
  - a user range "train_step" around each step,
  - a pinned host-to-device copy (the batch) and a pageable one (an extra tensor) each step,
  - a .item() each step (a synchronization),
  - one CUDA-graph replay (at --graph-step).

Writes the host time of every step (seconds) to --out as JSON, so the caller can compare the
step time with and without tracing, inside and outside the recording window.
"""
import argparse
import json
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def make_model():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(8), nn.Flatten(),
        nn.Linear(32 * 64, 512), nn.ReLU(),
        nn.Linear(512, 10))


def capture_graph(model, batch):
    """A forward pass captured as a CUDA graph (no grad): its replay shows graph ids."""
    static_in = torch.randn(batch, 3, 32, 32, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(side):
        for _ in range(3):
            model(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_out = model(static_in)
    return graph, static_out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--graph-step", type=int, default=60)
    parser.add_argument("--out", required=True, help="JSON file for the step times")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = make_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    samples = args.batch * 32
    data = TensorDataset(torch.randn(samples, 3, 32, 32), torch.randint(0, 10, (samples,)))
    loader = DataLoader(data, batch_size=args.batch, shuffle=True, drop_last=True,
                        num_workers=args.workers, pin_memory=True,
                        persistent_workers=args.workers > 0)
    pageable = torch.randn(1 << 18)  # 1 MiB of ordinary (pageable) host memory
    graph, _ = capture_graph(model, args.batch)
    torch.cuda.synchronize()

    batches = iter(loader)
    step_s = []
    losses = []
    for step in range(args.steps):
        start = time.perf_counter()
        torch.cuda.nvtx.range_push("train_step")
        torch.cuda.nvtx.range_push("gpuscope.data_wait")
        try:
            x, y = next(batches)
        except StopIteration:
            batches = iter(loader)
            x, y = next(batches)
        torch.cuda.nvtx.range_pop()
        x = x.cuda(non_blocking=True)  # pinned by the DataLoader
        y = y.cuda(non_blocking=True)
        extra = pageable.cuda()  # pageable: a staged, synchronous copy
        loss = loss_fn(model(x), y) + 0.0 * extra.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step == args.graph_step:
            graph.replay()
        torch.cuda.nvtx.mark("gpuscope.step")
        losses.append(loss.item())  # synchronizes with the GPU
        torch.cuda.nvtx.range_pop()
        step_s.append(time.perf_counter() - start)

    with open("/proc/self/maps") as maps:  # which CUPTI (torch's or the toolkit's) is loaded
        cupti = sorted({line.split()[-1] for line in maps if "cupti" in line})
    with open(args.out, "w") as f:
        json.dump({"step_s": step_s, "graph_step": args.graph_step, "steps": args.steps,
                   "torch": torch.__version__, "first_loss": losses[0],
                   "last_loss": losses[-1], "cupti_libraries": cupti}, f)
    print(f"smoke_train: {args.steps} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}, "
          f"median step {sorted(step_s)[len(step_s) // 2] * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
