#!/usr/bin/env python3
"""A torch.compile'd training loop: a 6-block pre-norm MLP-mixer-like model, AMP bf16, AdamW.

Inductor turns the model into Triton kernels launched through the CUDA driver API (not the
runtime's cudaLaunchKernel), compiles them in worker processes it forks, and with
`--compile-mode reduce-overhead` replays the step's kernels as CUDA graphs. A trace should
attribute the Triton kernels and the graph launches, and keep the compile workers out of the
step count (bench/trace_examples/README.md).

  python3 bench/trace_examples/compiled_train.py --steps 100 --batch 64
  python3 bench/trace_examples/compiled_train.py --compile-mode reduce-overhead
"""
import torch

from _trace_example import parse_args, run_timed

WIDTH = 1024
BLOCKS = 6
TOKENS = 128


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(WIDTH)
        self.up = torch.nn.Linear(WIDTH, 4 * WIDTH)
        self.down = torch.nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def options(parser):
    parser.add_argument(
        "--compile-mode",
        default="default",
        choices=["default", "reduce-overhead", "max-autotune-no-cudagraphs"],
        help="torch.compile's mode (default: default)",
    )


def main():
    args = parse_args(__doc__.splitlines()[0], steps=100, batch=64, warmup=10, extra=options)
    device = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block() for _ in range(BLOCKS)], torch.nn.LayerNorm(WIDTH))
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    generator = torch.Generator(device=device).manual_seed(1)
    batches = [
        (
            torch.randn(args.batch, TOKENS, WIDTH, device=device, generator=generator),
            torch.randn(args.batch, TOKENS, WIDTH, device=device, generator=generator),
        )
        for _ in range(4)
    ]

    @torch.compile(mode=args.compile_mode)
    def forward_loss(inputs, targets):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return torch.nn.functional.mse_loss(model(inputs).float(), targets)

    def iteration(i):
        inputs, targets = batches[i % len(batches)]
        loss = forward_loss(inputs, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    run_timed("compiled_train", args, iteration)


if __name__ == "__main__":
    main()
