#!/usr/bin/env python3
"""Synchronization every step: a GPT-like language model whose loop prints loss.item() and a
token accuracy read with .item() after every step.

Each step the host tokenizes the next batch in Python (a simple on-the-fly tokenizer, several
ms of CPU) and launches the step's kernels; the GPU trains (GPT-like, 12 layers, width 768,
sequence 512, batch 32, AMP bf16, fused AdamW). Without synchronization the tokenizing of batch
i+1 overlaps the GPU's work on batch i. `.item()` makes the host wait for the GPU every step:
while it then tokenizes, the GPU idles.

--fixed: the loss and accuracy are summed on the GPU and read (and printed) every --log-every
steps only; the tokens are copied with non_blocking=True (a blocking copy is a synchronization
of its own; from pageable memory the driver stages a non-blocking host-to-device copy at once,
without waiting for the GPU). `--fixed-copy pinned` pins the tokens first instead: on the H100
(2026-11-25) that twin ran at 45.6 ms a step against the flawed 28.7 ms, not yet understood,
so it is not the default.

The gain is about (tokenize + GPU step) / max(tokenize + launch, GPU step): at batch 16 on the
H100 the flawed loop took 28.7 ms a step with the GPU busy half of it; batch 32 (the default
since) doubles the tokenizing and the GPU's work but not the launches, for a larger share to win.

  python3 bench/diagnose_examples/sync_every_step.py            # the flaw
  python3 bench/diagnose_examples/sync_every_step.py --fixed    # the fixed twin
"""
import torch

from _diagnose_example import autocast, parse_args, run_timed
from _text import TextBatches, TinyGPT


def extra(parser):
    parser.add_argument("--seq", type=int, default=512, help="tokens per sample")
    parser.add_argument("--log-every", type=int, default=100, help="the fixed twin's log period")
    parser.add_argument("--fixed-copy", choices=["pageable", "pinned"], default="pageable",
                        help="the fixed twin's token copies: non_blocking from pageable or pinned")


def main():
    args = parse_args(
        __doc__, "loss.item() and print every step",
        steps=300, batch=32, warmup=5, extra=extra,
    )
    device = torch.device(args.device)
    torch.manual_seed(0)
    small = not args.cuda
    seq = 32 if small else args.seq
    data = TextBatches(args.batch, seq)
    model = TinyGPT(data.vocab, seq, 64 if small else 768, 2 if small else 12, 4 if small else 12)
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=args.cuda)
    loss_fn = torch.nn.CrossEntropyLoss()
    sums = torch.zeros(2, device=device)  # the fixed twin's loss and accuracy sums
    pin = args.fixed and args.cuda and args.fixed_copy == "pinned"

    def iteration(i):
        tokens, targets = data.next()
        if pin:
            tokens, targets = tokens.pin_memory(), targets.pin_memory()
        tokens = tokens.to(device, non_blocking=args.fixed)
        targets = targets.to(device, non_blocking=args.fixed)
        with autocast(args):
            logits = model(tokens)
            loss = loss_fn(logits.view(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        accuracy = (logits.argmax(-1) == targets).float().mean()
        if not args.fixed:
            print(f"step {i} loss {loss.item():.4f} accuracy {accuracy.item():.4f}")
        else:
            sums.add_(torch.stack([loss.detach().float(), accuracy]))
            if (i + 1) % args.log_every == 0:
                mean = (sums / args.log_every).tolist()
                print(f"step {i} loss {mean[0]:.4f} accuracy {mean[1]:.4f}")
                sums.zero_()

    run_timed(args, "sync_every_step", iteration,
              samples_per_step=args.batch, extra=lambda: {"tokens_per_step": args.batch * seq,
                            "fixed_copy": args.fixed_copy if args.fixed else None})


if __name__ == "__main__":
    main()
