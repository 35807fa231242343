"""torchvision ResNet-50 trained with DistributedDataParallel (AMP bf16, channels-last, data on
the GPUs), where rank 0 alone reads the predictions back and computes per-class accuracy in
Python every step for its log. Flaw: rank 0's host does work the others do not, its GPU waits for it, and the
other ranks wait for rank 0 in every all-reduce. Random weights, synthetic images.

    torchrun --standalone --nproc-per-node 2 ddp_rank0_logging.py
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--batch", type=int, default=96)
    ap.add_argument("--log", default=os.devnull)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    model = DistributedDataParallel(model, device_ids=[local_rank], gradient_as_bucket_view=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, foreach=True)
    torch.manual_seed(rank)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (args.batch,), device="cuda")
    label_list = labels.tolist()
    log = open(args.log, "a") if rank == 0 else None
    start = time.time()
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            outputs = model(images)
            loss = torch.nn.functional.cross_entropy(outputs, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if rank == 0:
            # The log's per-class accuracy, from a confusion matrix built in Python.
            predictions = outputs.argmax(1).tolist()
            confusion = [[0] * 1000 for _ in range(1000)]
            for truth, guess in zip(label_list, predictions):
                confusion[truth][guess] += 1
            per_class = [row[i] / max(1, sum(row)) for i, row in enumerate(confusion)]
            log.write(json.dumps({"step": step, "loss": loss.item(),
                                  "mean_class_accuracy": sum(per_class) / len(per_class),
                                  "elapsed": time.time() - start}) + "\n")
    torch.cuda.synchronize()
    if rank == 0:
        log.close()
        print(f"{args.steps} steps in {time.time() - start:.1f} s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
