#!/usr/bin/env python3
"""Input-bound: the healthy model fed by a DataLoader that decodes and augments on the CPU in
the training process itself (num_workers=0), into pageable memory.

Each sample is built on the host as decoding and augmentation would build it: random 8-bit
pixels (the "decoded" image, 3x256x256), a random crop to 224, a flip, conversion to float,
normalization (about 1 ms of CPU per sample, host-dependent). With num_workers=0 the GPU
waits for the host most of each step.

--fixed: DataLoader(num_workers=--workers, pin_memory=True, persistent_workers=True) and .to(device, non_blocking=True): the same samples, made in parallel by
worker processes while the GPU trains.

  python3 bench/diagnose_examples/input_bound.py            # the flaw
  python3 bench/diagnose_examples/input_bound.py --fixed    # the fixed twin
"""
import os

import torch

from _diagnose_example import healthy_training, parse_args, run_timed, train_step

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


class SyntheticImages(torch.utils.data.Dataset):
    """Images made on the CPU, as decoding and augmentation would, deterministic per index."""

    def __init__(self, length, size):
        self.length = length
        self.size = size

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        side = self.size + self.size // 7
        raw = torch.randint(0, 256, (3, side, side), dtype=torch.uint8, generator=generator)
        top, left = (index * 7) % (side - self.size), (index * 13) % (side - self.size)
        image = raw[:, top : top + self.size, left : left + self.size].float().div_(255.0)
        if index % 2:
            image = image.flip(-1)
        image = (image - MEAN) / STD
        return image, index % 1000


def extra(parser):
    parser.add_argument(
        "--workers",
        type=int,
        default=max(2, min(12, (os.cpu_count() or 4) - 2)),
        help="DataLoader workers of the fixed twin (default: CPUs - 2, at most 12)",
    )


def main():
    args = parse_args(
        __doc__, "num_workers=0 (decoding on the training thread)",
        steps=60, batch=128, warmup=3, extra=extra,
    )
    device = torch.device(args.device)
    step = train_step(args, *healthy_training(args, device))
    size = 224 if args.cuda else 32
    dataset = SyntheticImages((args.warmup + args.steps + 8) * args.batch, size)
    if args.fixed:
        loader = torch.utils.data.DataLoader(
            dataset, batch_size=args.batch, num_workers=args.workers, pin_memory=args.cuda,
            persistent_workers=True,
        )
    else:
        loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, num_workers=0)
    batches = iter(loader)

    def iteration(i):
        images, labels = next(batches)
        images = images.to(device, non_blocking=args.fixed).contiguous(
            memory_format=torch.channels_last
        )
        step(images, labels.to(device, non_blocking=args.fixed))

    run_timed(args, "input_bound", iteration,
              extra=lambda: {"num_workers": args.workers if args.fixed else 0})


if __name__ == "__main__":
    main()
