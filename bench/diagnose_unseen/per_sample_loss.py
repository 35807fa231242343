"""A small MLP classifier whose loss is computed one sample at a time in a Python loop over the
batch (a common way to write a per-example weighting): thousands of tiny kernels a step, each
launched by the host. Flaw: launch-bound. Synthetic data on the GPU."""
import argparse
import time

import torch
from torch import nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, 128, device="cuda")
    y = torch.randint(0, 10, (args.batch,), device="cuda")
    weights = torch.rand(args.batch, device="cuda")
    start = time.time()
    for step in range(args.steps):
        loss = 0
        for i in range(args.batch):
            out = model(x[i : i + 1])
            loss = loss + weights[i] * nn.functional.cross_entropy(out, y[i : i + 1])
        (loss / args.batch).backward()
        opt.step()
        opt.zero_grad()
        if step % 40 == 0:
            print(f"step {step} loss {loss.item():.4f} {time.time() - start:.1f}s", flush=True)


if __name__ == "__main__":
    main()
