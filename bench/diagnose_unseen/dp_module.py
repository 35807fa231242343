"""timm ViT-S/16 trained on every visible GPU with torch.nn.DataParallel (AMP bf16, fused AdamW,
data on the first GPU), as many multi-GPU tutorials still show it. Flaw: one process and one
Python thread drive every GPU; each step copies the model to every GPU and gathers the outputs on
the first. Random weights, synthetic images.

    python3 dp_module.py
"""
import argparse
import time

import timm
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--batch-per-gpu", type=int, default=128)
    args = ap.parse_args()
    gpus = torch.cuda.device_count()
    model = torch.nn.DataParallel(timm.create_model("vit_small_patch16_224").cuda())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    batch = args.batch_per_gpu * gpus
    images = torch.randn(batch, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (batch,), device="cuda")
    start = time.time()
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 40 == 0:
            print(f"step {step} on {gpus} GPUs, {time.time() - start:.1f}s", flush=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
