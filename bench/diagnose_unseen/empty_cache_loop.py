"""timm ResNet-50 (AMP bf16, channels-last, data on the GPU) whose loop calls gc.collect() and
torch.cuda.empty_cache() after every step, "to avoid running out of memory": the caching allocator
gives its memory back (cudaFree, which waits for the whole GPU) and takes it again (cudaMalloc)
every step. Flaw: allocator churn."""
import argparse
import gc
import time

import timm
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    model = timm.create_model("resnet50", pretrained=False).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (args.batch,), device="cuda")
    start = time.time()
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del loss
        gc.collect()
        torch.cuda.empty_cache()
        if step % 40 == 0:
            print(f"step {step} {time.time() - start:.1f}s", flush=True)


if __name__ == "__main__":
    main()
