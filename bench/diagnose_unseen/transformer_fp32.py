"""A PyTorch nn.TransformerEncoder language model trained in plain fp32 with PyTorch's default
matmul precision (TF32 off): the GEMMs run on the CUDA cores, not the tensor cores. Flaw: no
tensor cores. Random weights, synthetic tokens on the GPU."""
import argparse
import time

import torch
from torch import nn


class LM(nn.Module):
    def __init__(self, vocab=32000, width=1024, layers=8, heads=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=512)
    args = ap.parse_args()
    model = LM().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    tokens = torch.randint(0, 32000, (args.batch, args.seq_len + 1), device="cuda")
    start = time.time()
    for step in range(args.steps):
        logits = model(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 20 == 0:
            print(f"step {step} loss {loss.item():.4f} {time.time() - start:.1f}s", flush=True)


if __name__ == "__main__":
    main()
