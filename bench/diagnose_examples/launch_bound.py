#!/usr/bin/env python3
"""Launch-bound: 48 small Linear(256, 256) + LayerNorm + GELU blocks at batch 64, eager mode.

Every kernel runs for a few microseconds, less than the host needs to launch it, so the GPU
waits on the host between kernels all step long although nothing synchronizes. Matmuls use
TF32 (tensor cores), so the only flaw is the launch rate.

--fixed: the whole step (forward, backward, AdamW with capturable=True) captured once in a
CUDA graph (torch.cuda.graph) and replayed: one launch per step. The program then marks each
replay with the NVTX step mark "gpuscope.step" itself (the shim sees the optimizer step only at
capture; docs/python-shim.md).

  python3 bench/diagnose_examples/launch_bound.py            # the flaw
  python3 bench/diagnose_examples/launch_bound.py --fixed    # the fixed twin
"""
import torch

from _diagnose_example import parse_args, run_timed, vector_batches

LAYERS = 48
WIDTH = 256


def main():
    args = parse_args(
        __doc__, "eager launches of tiny kernels",
        steps=1000, batch=64, warmup=20,
    )
    device = torch.device(args.device)
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.LayerNorm(WIDTH), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(device)
    graphs = args.fixed and args.cuda
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=graphs)
    loss_fn = torch.nn.MSELoss()
    batches = vector_batches(args, device, WIDTH, 4)

    def step(inputs, targets):
        loss = loss_fn(model(inputs), targets)
        optimizer.zero_grad(set_to_none=False)
        loss.backward()
        optimizer.step()
        return loss

    if not graphs:

        def iteration(i):
            step(*batches[i % len(batches)])

    else:
        static_in = batches[0][0].clone()
        static_target = batches[0][1].clone()
        # Warm up on a side stream before capture (as torch.cuda.graphs' documentation does).
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step(static_in, static_target)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step(static_in, static_target)

        def iteration(i):
            inputs, targets = batches[i % len(batches)]
            static_in.copy_(inputs)
            static_target.copy_(targets)
            graph.replay()

    run_timed(args, "launch_bound", iteration, mark_steps=graphs,
              extra=lambda: {"cuda_graph": graphs})


if __name__ == "__main__":
    main()
