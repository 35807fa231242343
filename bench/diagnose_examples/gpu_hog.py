#!/usr/bin/env python3
"""Another job on the same GPU: bf16 matmuls (8192 x 8192) back to back for --seconds.

Started beside shared_gpu.py (by bench/diagnose_device.sh, outside `gpuscope trace`), it takes
its share of the GPU as another user's training would: the two processes' kernels are
time-sliced. Prints one JSON line at the end (matmuls done, seconds). Stops early on SIGTERM.

  python3 bench/diagnose_examples/gpu_hog.py --seconds 30 &
"""
import argparse
import json
import signal
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30, help="how long to run")
    parser.add_argument("--size", type=int, default=8192, help="matrix side")
    parser.add_argument("--ready-file", help="a file to create once the first matmuls ran")
    args = parser.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    start = time.perf_counter()
    done = 0
    while not stop and time.perf_counter() - start < args.seconds:
        for _ in range(10):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        done += 10
        if args.ready_file and done == 10:
            open(args.ready_file, "w").close()
    seconds = time.perf_counter() - start
    print(json.dumps({"program": "gpu_hog", "matmuls": done, "seconds": seconds,
                      "tflops": 2 * args.size**3 * done / seconds / 1e12}), flush=True)


if __name__ == "__main__":
    main()
