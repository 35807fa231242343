#!/usr/bin/env python3
"""A healthy, GPU-bound training loop: ResNet-18, AMP bf16, batch 128, data already on the GPU.

The reference for the other trace examples: the GPU is busy for nearly the whole step, the host
runs ahead of it, nothing synchronizes inside the loop. `gpuscope diagnose` should find nothing
to fix here (bench/trace_examples/README.md).

  python3 bench/trace_examples/healthy_train.py --steps 50 --batch 128
"""
import torch

from _trace_example import gpu_batches, parse_args, resnet18_training, run_timed


def main():
    args = parse_args(__doc__.splitlines()[0], steps=50, batch=128)
    device = torch.device("cuda")
    _, _, step = resnet18_training(args.batch, device)
    batches = gpu_batches(args.batch, device)

    def iteration(i):
        images, labels = batches[i % len(batches)]
        step(images, labels)

    run_timed("healthy_train", args, iteration)


if __name__ == "__main__":
    main()
