"""An nn.TransformerEncoder language model trained with DistributedDataParallel (AMP bf16,
fused AdamW) on documents of 64 to 512 tokens. The dataset comes sorted by length, as a
preprocessing step left it, and each rank takes a contiguous shard of it: rank 0 the short
documents, the last rank the long ones, each batch padded to its longest rounded up to 128
tokens (a few shapes, planned once each). Flaw: the last rank computes longer every step, and the
others wait for it in every all-reduce. Random weights, synthetic tokens.

    torchrun --standalone --nproc-per-node 2 ddp_uneven_lengths.py
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class LM(nn.Module):
    def __init__(self, vocab=32000, width=768, layers=8, heads=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens, padding):
        return self.head(self.encoder(self.embed(tokens), src_key_padding_mask=padding))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--documents", type=int, default=4096)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    # Every rank builds the same sorted dataset, then keeps its contiguous shard.
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(64, 513, (args.documents,), generator=g).sort().values
    shard = lengths[rank * args.documents // world:(rank + 1) * args.documents // world]
    shard_on_gpu = shard.cuda()
    model = DistributedDataParallel(LM().cuda(), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    start = time.time()
    for step in range(args.steps):
        first = (step * args.batch) % (len(shard) - args.batch)
        # The length to pad to from the host's copy, the mask from the GPU's: no copy, no wait.
        longest = -(-int(shard[first:first + args.batch].max()) // 128) * 128
        tokens = torch.randint(0, 32000, (args.batch, longest + 1), device="cuda")
        batch_lengths = shard_on_gpu[first:first + args.batch]
        padding = torch.arange(longest, device="cuda")[None, :] >= batch_lengths[:, None]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1], padding)
            targets = tokens[:, 1:].masked_fill(padding, -100)
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)),
                                               targets.reshape(-1), ignore_index=-100)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 40 == 0 and rank == 0:
            print(f"step {step} {time.time() - start:.1f}s", flush=True)
    torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
