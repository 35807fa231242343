#!/usr/bin/env python3
"""Pageable, blocking host-to-device copies: batches held in ordinary (pageable) host memory,
copied with a blocking .to(device) on the compute stream at the start of each step.

The model is a half-width ResNet-18 (a quarter of its FLOPs), so the copy is a large part of
the step. The data set is already prepared in host memory (float32 images, normalized: what a loader
that caches its samples, or a pre-processed tensor file, gives). Each step copies its batch,
256x3x224x224 float32 = 154 MB, from pageable memory: the driver stages it through its own
pinned buffer, more slowly than from pinned memory, and the host waits for the copy (and so for
everything queued before it) before it can launch the step's kernels; the GPU computes nothing
while it copies.

--fixed: the same batches in pinned (page-locked) memory, copied with non_blocking=True on a
side stream one step ahead (the usual prefetcher): the copy of batch i+1 overlaps step i.

  python3 bench/diagnose_examples/pageable_copies.py            # the flaw
  python3 bench/diagnose_examples/pageable_copies.py --fixed    # the fixed twin
"""
import torch

from _diagnose_example import autocast, parse_args, resnet18_like, run_timed


def main():
    args = parse_args(
        __doc__, "pageable memory and blocking copies",
        steps=200, batch=256, warmup=5,
    )
    device = torch.device(args.device)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = resnet18_like(args, width=32).to(device).to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(
        model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5, fused=args.cuda
    )
    loss_fn = torch.nn.CrossEntropyLoss()
    size = 224 if args.cuda else 32
    generator = torch.Generator().manual_seed(1)
    # Four host batches, channels-last as the model wants them (so a copy is one memcpy).
    host = []
    for _ in range(4):
        images = torch.randn(args.batch, 3, size, size, generator=generator)
        images = images.contiguous(memory_format=torch.channels_last)
        labels = torch.randint(0, 1000, (args.batch,), generator=generator)
        if args.fixed and args.cuda:
            images, labels = images.pin_memory(), labels.pin_memory()
        host.append((images, labels))

    def train(images, labels):
        with autocast(args):
            loss = loss_fn(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    if not (args.fixed and args.cuda):

        def iteration(i):
            images, labels = host[i % len(host)]
            train(images.to(device), labels.to(device))

    else:
        copy_stream = torch.cuda.Stream()
        ahead = {}

        def prefetch(i):
            images, labels = host[i % len(host)]
            with torch.cuda.stream(copy_stream):
                ahead[i] = (
                    images.to(device, non_blocking=True),
                    labels.to(device, non_blocking=True),
                )

        prefetch(0)

        def iteration(i):
            torch.cuda.current_stream().wait_stream(copy_stream)
            images, labels = ahead.pop(i)
            # The compute stream uses memory the copy stream allocated: keep it from being
            # reused before the step is done with it.
            images.record_stream(torch.cuda.current_stream())
            labels.record_stream(torch.cuda.current_stream())
            prefetch(i + 1)
            train(images, labels)

    run_timed(args, "pageable_copies", iteration,
              extra=lambda: {"copy_bytes_per_step": host[0][0].nbytes + host[0][1].nbytes})


if __name__ == "__main__":
    main()
