"""timm ViT-S/16 with gradient accumulation over 4 micro-batches, logging the running loss with
.item() after every micro-batch: the host waits for the GPU four times a step. Flaw: a sync in
every step. Random weights, synthetic images already on the GPU."""
import argparse
import time

import timm
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--micro-batch", type=int, default=32)
    ap.add_argument("--accum", type=int, default=4)
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=1000).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    images = torch.randn(args.accum, args.micro_batch, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (args.accum, args.micro_batch), device="cuda")
    start = time.time()
    for step in range(args.steps):
        running = 0.0
        for k in range(args.accum):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(images[k]), labels[k]) / args.accum
            loss.backward()
            running += loss.item()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 20 == 0:
            print(f"step {step} loss {running:.4f} {time.time() - start:.1f}s", flush=True)


if __name__ == "__main__":
    main()
