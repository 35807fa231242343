"""A steady GPU workload for `gpuscope sweep -- CMD`: bf16 matrix multiplies, and every window
(0.5 s by default) one line {"samples_per_second": X} on stdout, X = multiplies per second.
Runs until killed. Reads the GPU only."""
import argparse
import json
import sys
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--size", type=int, default=8192)
parser.add_argument("--window", type=float, default=0.5)
args = parser.parse_args()
a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
while True:
    torch.cuda.synchronize()
    start, done = time.perf_counter(), 0
    while time.perf_counter() - start < args.window:
        for _ in range(8):
            a @ b
        torch.cuda.synchronize()
        done += 8
    print(json.dumps({"samples_per_second": done / (time.perf_counter() - start)}), flush=True)
    sys.stdout.flush()
