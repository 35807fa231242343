#!/usr/bin/env python3
"""cuDNN defaults: a ResNet-18-like net trained with AMP bf16 in PyTorch's default NCHW layout,
torch.backends.cudnn.benchmark left False.

With NCHW tensors the bf16 convolutions need layout transposes around them (cuDNN's tensor-core
kernels want NHWC), and without benchmark cuDNN takes its heuristic's algorithm instead of
timing the candidates once.

--fixed: the model and the images in channels_last, torch.backends.cudnn.benchmark = True.

  python3 bench/diagnose_examples/cudnn_defaults.py            # the flaw
  python3 bench/diagnose_examples/cudnn_defaults.py --fixed    # the fixed twin
"""
import torch

from _diagnose_example import image_batches, parse_args, resnet18_like, run_timed, sgd, train_step


def main():
    args = parse_args(
        __doc__, "NCHW layout and cudnn.benchmark off",
        steps=400, batch=128, warmup=10,
    )
    device = torch.device(args.device)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = args.fixed
    model = resnet18_like(args).to(device)
    if args.fixed:
        model = model.to(memory_format=torch.channels_last)
    step = train_step(args, model, sgd(args, model), torch.nn.CrossEntropyLoss())
    batches = image_batches(args, device, channels_last=args.fixed)
    run_timed(args, "cudnn_defaults", lambda i: step(*batches[i % len(batches)]),
              extra=lambda: {"channels_last": args.fixed, "cudnn_benchmark": args.fixed})


if __name__ == "__main__":
    main()
