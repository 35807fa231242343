"""torchvision ResNet-18 (AMP bf16, channels-last, data on the GPU) whose loop body also computes
per-class label statistics in pure Python over the host's copy of the batch's labels and appends
a JSON log line every step: tens of milliseconds of host work no rule names (no DataLoader wait,
no synchronization, long kernels). Flaw: the GPU idles while the host works (gpu_idle)."""
import argparse
import json
import math
import os
import random
import tempfile
import time

import torch
import torchvision


def label_statistics(labels, classes):
    counts = [0] * classes
    for label in labels:
        counts[label] += 1
    pairs = {}
    for a, b in zip(labels, labels[1:]):
        pairs[(a, b)] = pairs.get((a, b), 0) + 1
    entropy = 0.0
    for c in counts:
        if c:
            p = c / len(labels)
            entropy -= p * math.log(p)
    return {"entropy": entropy, "distinct_pairs": len(pairs), "max_count": max(counts)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=200, help="host work per step (label passes)")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet18().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    rng = random.Random(0)
    host_labels = [rng.randrange(1000) for _ in range(args.batch)]
    labels = torch.tensor(host_labels, device="cuda")
    log = open(os.path.join(tempfile.gettempdir(), f"python_metrics_{os.getpid()}.jsonl"), "w")
    start = time.time()
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        stats = [label_statistics(host_labels, 1000) for _ in range(args.repeat)][-1]
        log.write(json.dumps({"step": step, "t": time.time() - start, **stats}) + "\n")
        if step % 40 == 0:
            print(f"step {step} {time.time() - start:.1f}s", flush=True)
    log.close()
    os.remove(log.name)


if __name__ == "__main__":
    main()
