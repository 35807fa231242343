#!/usr/bin/env python3
"""A launch-bound loop: 64 tiny Linear(256, 256) layers at batch 32, eager mode, fp32.

Every kernel runs for a few microseconds, less than the host needs to launch it, so the GPU
waits on the host between kernels all step long although nothing synchronizes. `gpuscope
diagnose` should report short kernels, a low busy fraction and launch gaps, and suggest fewer
larger kernels (a larger batch, torch.compile, CUDA graphs) (bench/trace_examples/README.md).

  python3 bench/trace_examples/launch_bound.py --steps 200 --batch 32
"""
import torch

from _trace_example import parse_args, run_timed

LAYERS = 64
WIDTH = 256


def main():
    args = parse_args(__doc__.splitlines()[0], steps=200, batch=32, warmup=20)
    device = torch.device("cuda")
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.MSELoss()
    generator = torch.Generator(device=device).manual_seed(1)
    batches = [
        (
            torch.randn(args.batch, WIDTH, device=device, generator=generator),
            torch.randn(args.batch, WIDTH, device=device, generator=generator),
        )
        for _ in range(4)
    ]

    def iteration(i):
        inputs, targets = batches[i % len(batches)]
        loss = loss_fn(model(inputs), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    run_timed("launch_bound", args, iteration)


if __name__ == "__main__":
    main()
