"""The control: timm ViT-B/16 trained well (AMP bf16, fused AdamW, batch 128, synthetic images on
the GPU, no host reads in the loop). diagnose should find nothing major."""
import argparse
import time

import timm
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    model = timm.create_model("vit_base_patch16_224", pretrained=False).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (args.batch,), device="cuda")
    start = time.time()
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 40 == 0:
            print(f"step {step} {time.time() - start:.1f}s", flush=True)


if __name__ == "__main__":
    main()
