#!/usr/bin/env python3
"""The healthy control: a ResNet-18-like net, AMP bf16, channels-last, cudnn.benchmark,
fused SGD with momentum, batch 128, inputs already on the GPU, nothing read back in the loop.

`gpuscope diagnose` should find nothing major here (the GPU busy almost all of each step, the
convolutions on tensor cores in bf16). `--fixed` changes nothing: the control has no flaw; it
is accepted so that every example takes the same options.

  python3 bench/diagnose_examples/healthy.py
"""
import torch

from _diagnose_example import autocast, image_batches, parse_args, resnet18_like, run_timed


def main():
    args = parse_args(__doc__, None, steps=300, batch=128)
    device = torch.device(args.device)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = resnet18_like(args).to(device).to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(
        model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5, fused=args.cuda
    )
    loss_fn = torch.nn.CrossEntropyLoss()
    batches = image_batches(args, device)

    def iteration(i):
        images, labels = batches[i % len(batches)]
        with autocast(args):
            loss = loss_fn(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    run_timed(args, "healthy", iteration)


if __name__ == "__main__":
    main()
