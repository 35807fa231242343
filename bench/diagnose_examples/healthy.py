#!/usr/bin/env python3
"""The healthy control: a ResNet-18-like net, AMP bf16, channels-last, cudnn.benchmark,
fused SGD with momentum, batch 128, inputs already on the GPU, nothing read back in the loop.

`gpuscope diagnose` should find nothing major here (the GPU busy almost all of each step, the
convolutions on tensor cores in bf16). `--fixed` changes nothing: the control has no flaw; it
is accepted so that every example takes the same options.

  python3 bench/diagnose_examples/healthy.py
"""
import torch

from _diagnose_example import healthy_training, image_batches, parse_args, run_timed, train_step


def main():
    args = parse_args(__doc__, None, steps=300, batch=128)
    device = torch.device(args.device)
    step = train_step(args, *healthy_training(args, device))
    batches = image_batches(args, device)
    run_timed(args, "healthy", lambda i: step(*batches[i % len(batches)]))


if __name__ == "__main__":
    main()
