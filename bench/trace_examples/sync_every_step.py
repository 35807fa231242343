#!/usr/bin/env python3
"""The healthy loop, plus what many training scripts do each step: print the loss with
`loss.item()` and copy a small metric to the host with `.cpu()`.

Each of those waits for the GPU to finish the step, so the host can no longer queue the next
step's kernels while the GPU works: the GPU idles at the start of every step for as long as the
host takes to launch it. `gpuscope diagnose` should name the synchronizations (one or two per
step, from Python) and the idle gap after each (bench/trace_examples/README.md).

  python3 bench/trace_examples/sync_every_step.py --steps 50 --batch 128
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
        loss, logits = step(images, labels)
        accuracy = (logits.argmax(dim=1) == labels).float().mean().cpu()  # a tiny device->host copy
        print("step %d loss %.4f accuracy %.3f" % (i, loss.item(), float(accuracy)), flush=True)

    run_timed("sync_every_step", args, iteration)


if __name__ == "__main__":
    main()
