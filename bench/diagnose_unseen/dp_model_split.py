"""A GPT-style stack of nn.TransformerEncoderLayer split by hand across two GPUs (the first half
of the layers on cuda:0, the second on cuda:1; AMP bf16, fused AdamW), as "model parallel"
tutorials show it: the activations go to the second GPU with .to("cuda:1") and the gradients come
back in the backward. Flaw: one batch at a time, so each GPU waits while the other computes, and
the copies between them run with nothing beside them. Random weights, synthetic tokens.

    python3 dp_model_split.py
"""
import argparse
import time

import torch
from torch import nn


def stage(layers, width, device):
    return nn.Sequential(*[
        nn.TransformerEncoderLayer(width, 16, 4 * width, batch_first=True, norm_first=True)
        for _ in range(layers)
    ]).to(device)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=12)
    args = ap.parse_args()
    vocab = 32000
    embed = nn.Embedding(vocab, args.width).to("cuda:0")
    first = stage(args.layers // 2, args.width, "cuda:0")
    second = stage(args.layers - args.layers // 2, args.width, "cuda:1")
    head = nn.Linear(args.width, vocab).to("cuda:1")
    params = [*embed.parameters(), *first.parameters(), *second.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4, fused=True)
    tokens = torch.randint(0, vocab, (args.batch, args.seq), device="cuda:0")
    targets = torch.randint(0, vocab, (args.batch, args.seq), device="cuda:1")
    start = time.time()
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            hidden = first(embed(tokens))
            logits = head(second(hidden.to("cuda:1")))
            loss = nn.functional.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 40 == 0:
            print(f"step {step}, {time.time() - start:.1f}s", flush=True)
    torch.cuda.synchronize("cuda:0")
    torch.cuda.synchronize("cuda:1")


if __name__ == "__main__":
    main()
