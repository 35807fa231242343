#!/usr/bin/env python3
"""A trace hard case (issue 15): processes made around CUDA initialization.

  --fork after   CUDA is initialized (the model on the GPU) before the DataLoader's iterator
                 forks its 2 workers: the workers inherit a process in which CUDA is set up
                 (they must not use it, and the injection library must not use CUPTI there);
  --fork before  the DataLoader's persistent workers are forked first, CUDA initialized after.
Either way a child started with the "spawn" method then runs a few matmuls on the GPU: a fresh
CUDA-using descendant, which `gpuscope trace` should record in a file of its own.

Trains a small conv net on the workers' batches (made on the CPU) for --steps steps; prints one
JSON line: {"program", "fork", "steps", "step_time_s_median", "workers", "spawned_child_exit"}.

  python3 bench/trace_cases/fork_workers.py --fork after
"""
import argparse
import json
import statistics
import time

import torch
import torch.multiprocessing as mp


class Images(torch.utils.data.Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        return torch.rand(3, 64, 64, generator=g), index % 10


def spawned_child(size):
    a = torch.randn(size, size, device="cuda")
    for _ in range(20):
        a = torch.tanh(a @ a / size)
    torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fork", choices=["after", "before"], default="after")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    loader = torch.utils.data.DataLoader(Images(), batch_size=args.batch, num_workers=2,
                                         persistent_workers=True, pin_memory=False)
    batches = None
    if args.fork == "before":
        batches = iter(loader)  # forks the workers now, before any CUDA call
        next(batches)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(32, 32, 3, padding=1),
        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10),
    ).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if batches is None:
        batches = iter(loader)  # forks the workers after CUDA initialization
    events = []
    for _ in range(args.steps):
        images, labels = next(batches)
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        events.append(event)
    torch.cuda.synchronize()
    steps = [a.elapsed_time(b) / 1e3 for a, b in zip(events[5:], events[6:])]
    child = mp.get_context("spawn").Process(target=spawned_child, args=(1024,))
    child.start()
    child.join()
    print(json.dumps({"program": "fork_workers", "fork": args.fork, "steps": args.steps,
                      "step_time_s_median": statistics.median(steps), "workers": 2,
                      "spawned_child_exit": child.exitcode}), flush=True)


if __name__ == "__main__":
    main()
