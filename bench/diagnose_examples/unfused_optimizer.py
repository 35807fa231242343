#!/usr/bin/env python3
"""Unfused optimizer: a model of many small parameters (a 24-layer transformer of width 256:
about 300 weight tensors) trained with AdamW(foreach=False, fused=False), the per-parameter
loop: a dozen small elementwise kernels per tensor after every backward, some 4,000 launches
per step for a model whose forward and backward take a few ms.

--fixed: AdamW(fused=True): one fused kernel over all parameters per launch group.

  python3 bench/diagnose_examples/unfused_optimizer.py            # the flaw
  python3 bench/diagnose_examples/unfused_optimizer.py --fixed    # the fixed twin
"""
import torch

from _diagnose_example import autocast, parse_args, run_timed
from _text import TinyGPT


def extra(parser):
    parser.add_argument("--seq", type=int, default=256, help="tokens per sample")
    parser.add_argument("--layers", type=int, default=24, help="transformer blocks")


def main():
    args = parse_args(
        __doc__, "AdamW foreach=False fused=False (per-parameter loop)",
        steps=400, batch=64, warmup=5, extra=extra,
    )
    device = torch.device(args.device)
    torch.manual_seed(0)
    seq = args.seq if args.cuda else 16
    vocab = 8192
    model = TinyGPT(vocab, seq, 256 if args.cuda else 32, args.layers, 4).to(device)
    if args.fixed and args.cuda:
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=False, fused=False)
    loss_fn = torch.nn.CrossEntropyLoss()
    generator = torch.Generator(device=device).manual_seed(1)
    batches = [
        torch.randint(0, vocab, (args.batch, seq + 1), device=device, generator=generator)
        for _ in range(4)
    ]

    def iteration(i):
        tokens = batches[i % len(batches)]
        with autocast(args):
            logits = model(tokens[:, :-1])
            loss = loss_fn(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    params = sum(1 for _ in model.parameters())
    run_timed(args, "unfused_optimizer", iteration,
              extra=lambda: {"parameter_tensors": params, "fused": args.fixed})


if __name__ == "__main__":
    main()
