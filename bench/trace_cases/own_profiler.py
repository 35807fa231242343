#!/usr/bin/env python3
"""A trace hard case (issue 15): a program that starts its own torch.profiler.

A small ResNet-like loop (channels-last, AMP bf16) runs --steps steps; steps [--profile-from,
--profile-from + 6) run inside torch.profiler.profile(activities=[CPU, CUDA]) with
prof.step() after each. CUPTI takes one subscriber: under `gpuscope trace` either the profiler
or the injection library gets the GPU records. The program goes on either way and says in its
JSON line how many CUDA kernel events its profiler saw ("profiler": {"cuda_events", "error"}).

  python3 bench/trace_cases/own_profiler.py
"""
import argparse
import json
import statistics

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--profile-from", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10),
    ).cuda().to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.batch, 3, 112, 112, device="cuda").to(memory_format=torch.channels_last)
    labels = torch.randint(0, 10, (args.batch,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    events = []
    report = {"cuda_events": None, "error": None}
    i = 0
    while i < args.steps:
        if i == args.profile_from:
            try:
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                    for _ in range(6):
                        step()
                        events.append(torch.cuda.Event(enable_timing=True))
                        events[-1].record()
                        prof.step()
                        i += 1
                torch.cuda.synchronize()
                kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
                report["cuda_events"] = len(kernels)
            except Exception as e:  # noqa: BLE001 - recorded, not raised: the case's question
                report["error"] = f"{type(e).__name__}: {e}"
            continue
        step()
        events.append(torch.cuda.Event(enable_timing=True))
        events[-1].record()
        i += 1
    torch.cuda.synchronize()
    steps = [a.elapsed_time(b) / 1e3 for a, b in zip(events[3:], events[4:])]
    print(json.dumps({"program": "own_profiler", "steps": args.steps,
                      "step_time_s_median": statistics.median(steps), "profiler": report}),
          flush=True)


if __name__ == "__main__":
    main()
