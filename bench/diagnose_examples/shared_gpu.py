#!/usr/bin/env python3
"""A shared GPU: the healthy training step (ResNet-18-like, AMP bf16, channels-last, fused SGD,
batch 128) while another process uses the same GPU.

The flaw is outside the program: start gpu_hog.py (bf16 matmuls back to back) on the same GPU
first, as bench/diagnose_device.sh does, and run this program beside it; the fixed twin is the
same program with the GPU to itself. The program is the same in both runs: `--fixed` only
labels the run ("fixed": run alone) in the JSON line, and `--start-hog SECONDS` starts the hog
itself, detached (a grandchild re-parented away from this process, with the gpuscope variables
removed from its environment, so that a trace of this program does not take it for a part of
the job).

  python3 bench/diagnose_examples/gpu_hog.py --seconds 30 & sleep 5
  python3 bench/diagnose_examples/shared_gpu.py             # the flaw: beside the hog
  python3 bench/diagnose_examples/shared_gpu.py --fixed     # alone (after the hog ended)
"""
import os
import subprocess
import sys
import time

import torch

from _diagnose_example import healthy_training, image_batches, parse_args, run_timed, train_step


def extra(parser):
    parser.add_argument("--start-hog", type=float, metavar="SECONDS", default=0,
                        help="start gpu_hog.py detached for SECONDS first (flawed runs only)")


def start_hog(seconds):
    """gpu_hog.py as a grandchild (double fork): not a descendant of this process once its
    parent exited, and without the tracing environment. Waits until it has run matmuls."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUSCOPE_", "CUDA_INJECTION64", "NVTX_INJECTION64"))}
    env["PYTHONPATH"] = ":".join(p for p in env.get("PYTHONPATH", "").split(":")
                                 if p and "gpuscope_shim" not in p)
    ready = "/tmp/gpuscope-gpu-hog-ready-%d" % os.getpid()
    hog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_hog.py")
    launcher = ("import subprocess, sys; subprocess.Popen(sys.argv[1:], start_new_session=True,"
                " stdout=subprocess.DEVNULL)")
    subprocess.run([sys.executable, "-c", launcher, sys.executable, hog, "--seconds",
                    str(seconds), "--ready-file", ready], env=env, check=True)
    deadline = time.time() + 60
    while not os.path.exists(ready) and time.time() < deadline:
        time.sleep(0.1)
    if os.path.exists(ready):
        os.unlink(ready)


def main():
    args = parse_args(
        __doc__, "another process on the same GPU",
        steps=300, batch=128, extra=extra,
    )
    if args.start_hog and not args.fixed and args.cuda:
        start_hog(args.start_hog)
    device = torch.device(args.device)
    step = train_step(args, *healthy_training(args, device))
    batches = image_batches(args, device)
    run_timed(args, "shared_gpu", lambda i: step(*batches[i % len(batches)]))


if __name__ == "__main__":
    main()
