#!/usr/bin/env python3
"""Small batch: the healthy ResNet-18-like training step (AMP bf16, channels-last,
cudnn.benchmark, fused SGD) at batch 8, which uses a few hundred MB of an 80 GB GPU.

Every kernel is small: the GPU is never filled, and per-sample cost is dominated by fixed
per-step costs (launches, the optimizer's update of every weight). Compare samples per second.

--fixed: batch 256 (--fixed-batch), the same model, data and settings (learning rate scaled
linearly with the batch, as one would; the speed does not depend on it).

  python3 bench/diagnose_examples/small_batch.py            # the flaw
  python3 bench/diagnose_examples/small_batch.py --fixed    # the fixed twin
"""
import torch

from _diagnose_example import healthy_training, image_batches, parse_args, run_timed, train_step


def extra(parser):
    parser.add_argument("--fixed-batch", type=int, default=256, help="the fixed twin's batch")


def main():
    args = parse_args(
        __doc__, "batch far too small for the GPU",
        steps=1000, batch=8, warmup=10, extra=extra,
    )
    if args.fixed:
        args.batch = args.fixed_batch
    device = torch.device(args.device)
    step = train_step(args, *healthy_training(args, device, lr=0.1 * args.batch / 256))
    batches = image_batches(args, device)
    run_timed(args, "small_batch", lambda i: step(*batches[i % len(batches)]))


if __name__ == "__main__":
    main()
