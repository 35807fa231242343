#!/usr/bin/env python3
"""A data-starved loop: the healthy model fed by a DataLoader that prepares images on the CPU.

The dataset builds each 224x224 image on the host (random pixels, a crop, a flip, normalization,
a 3x3 blur: about 1-2 ms of CPU per sample), in the training process itself (num_workers=0),
into pageable memory, copied with a blocking .to(device). The GPU waits for the host most of
each step. `gpuscope diagnose` should find long gpuscope.data_wait ranges with the GPU idle
during them, and pageable host-to-device copies, and suggest DataLoader workers, pinned memory
and non_blocking copies (bench/trace_examples/README.md).

The JSON line adds data_wait_s_median: the program's own host-clock time around next() on the
DataLoader iterator, to compare with the trace's data_wait ranges.

  python3 bench/trace_examples/data_starved.py --steps 20 --batch 128
"""
import statistics
import time

import torch
import torch.nn.functional as F

from _trace_example import parse_args, resnet18_training, run_timed

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
BLUR = torch.full((3, 1, 3, 3), 1.0 / 9.0)


class SyntheticImages(torch.utils.data.Dataset):
    """Images made on the CPU, as decoding and augmentation would, deterministic per index."""

    def __init__(self, length):
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        raw = torch.randint(0, 256, (3, 256, 256), dtype=torch.uint8, generator=generator)
        top, left = (index * 7) % 32, (index * 13) % 32
        image = raw[:, top : top + 224, left : left + 224].float().div_(255.0)
        if index % 2:
            image = image.flip(-1)
        image = (image - MEAN) / STD
        image = F.conv2d(image.unsqueeze(0), BLUR, padding=1, groups=3).squeeze(0)
        return image, index % 1000


def main():
    args = parse_args(__doc__.splitlines()[0], steps=20, batch=128, warmup=3)
    device = torch.device("cuda")
    _, _, step = resnet18_training(args.batch, device)
    dataset = SyntheticImages((args.warmup + args.steps) * args.batch)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, num_workers=0)
    batches = iter(loader)
    waits = []

    def iteration(i):
        start = time.perf_counter()
        images, labels = next(batches)
        waits.append(time.perf_counter() - start)
        images = images.to(device).contiguous(memory_format=torch.channels_last)
        labels = labels.to(device)
        step(images, labels)

    def data_wait():
        timed = waits[args.warmup :]
        return {"data_wait_s_median": statistics.median(timed)}

    run_timed("data_starved", args, iteration, extra=data_wait)


if __name__ == "__main__":
    main()
