"""What the trace example programs share: options, the ResNet-18 training step, and the timing.

Each program times itself the same way, so that the step times `gpuscope trace` reports can be
set beside the program's own:
  - `--warmup` untimed iterations first (cuDNN picks its algorithms, the allocator settles);
  - then torch.cuda.synchronize(), the host clock, `--steps` iterations, synchronize(), the
    host clock: wall_s, and samples_per_s = steps * batch / wall_s;
  - a CUDA event recorded after each iteration's optimizer step (where the shim's step mark
    falls), read only at the end: the median interval between consecutive events is
    step_time_s_median. Recording an event adds no synchronization.
One JSON line at the end: {"program", "steps", "batch", "step_time_s_median", "samples_per_s",
"step_times_s" (each timed iteration), "pid", "tids" (/proc/self/task at the end), ...}; the programs print nothing else on stdout unless their flaw is printing.

No torch.profiler and no NVTX of their own: under `gpuscope trace` the shim marks the steps.
`--torch-profiler SKIP:STEPS` runs torch.profiler over that window instead (the peer users reach
for, to compare what each costs the program; bench/trace_overhead_device.sh's `peers`).
`--nvtx-steps` marks them here instead (torch.cuda.nvtx.mark("gpuscope.step") after each
iteration), for a run without the shim (GPUSCOPE_SHIM=0); with both, every step is marked twice.
"""
import argparse
import json
import os
import statistics
import time

import torch

STEP_MARK = "gpuscope.step"


def parse_args(description, steps, batch, warmup=10, extra=None):
    """The shared options; extra(parser), if given, adds a program's own."""
    parser = argparse.ArgumentParser(description=description)
    if extra is not None:
        extra(parser)
    parser.add_argument("--steps", type=int, default=steps, help="timed iterations")
    parser.add_argument("--batch", type=int, default=batch, help="samples per iteration")
    parser.add_argument("--warmup", type=int, default=warmup, help="untimed iterations first")
    parser.add_argument(
        "--nvtx-steps",
        action="store_true",
        help='mark each iteration with NVTX "%s" (for a run without the shim)' % STEP_MARK,
    )
    parser.add_argument(
        "--torch-profiler",
        metavar="SKIP:STEPS",
        help="record iterations SKIP .. SKIP+STEPS-1 (warm-up included) with torch.profiler, "
        "CPU and CUDA, as a user would (the peer of `gpuscope trace --skip-steps SKIP --steps "
        "STEPS`); the Chrome trace goes to a temporary folder, its path on stderr",
    )
    args = parser.parse_args()
    if args.steps < 2 or args.batch < 1 or args.warmup < 0:
        parser.error("--steps must be at least 2, --batch at least 1, --warmup at least 0")
    if args.torch_profiler:
        try:
            skip, count = (int(x) for x in args.torch_profiler.split(":"))
        except ValueError:
            parser.error("--torch-profiler expects SKIP:STEPS, got " + args.torch_profiler)
        if skip < 1 or count < 1:
            parser.error("--torch-profiler: SKIP and STEPS must be at least 1")
        args.torch_profiler = (skip, count)
    return args


def torch_profiler(window):
    """A torch.profiler over the window (SKIP, STEPS) of iterations, or None: its schedule waits
    SKIP - 1 steps, warms up one (CUPTI on, records dropped, as the profiler's docs advise) and
    records STEPS; prof.step() after each iteration."""
    if window is None:
        return None
    import sys
    import tempfile

    skip, count = window
    folder = tempfile.mkdtemp(prefix="torch-profiler-")

    def ready(prof):
        path = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(path)
        print("torch.profiler trace: " + path, file=sys.stderr, flush=True)

    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    schedule = torch.profiler.schedule(wait=skip - 1, warmup=1, active=count, repeat=1)
    prof = torch.profiler.profile(activities=activities, schedule=schedule, on_trace_ready=ready)
    prof.start()
    return prof


def resnet18_training(batch, device):
    """ResNet-18 (random init, 1000 classes), channels-last, SGD with momentum, AMP bf16.

    Returns (model, optimizer, step) where step(images, labels) runs one iteration and returns
    (loss, logits) as GPU tensors, without reading them.
    """
    import torchvision

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet18(num_classes=1000).to(device)
    model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(images, labels):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images)
            loss = loss_fn(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss, logits

    return model, optimizer, step


def gpu_batches(batch, device, count=4):
    """`count` batches of random 224x224 images and labels already on the GPU, to rotate."""
    generator = torch.Generator(device=device).manual_seed(1)
    return [
        (
            torch.randn(batch, 3, 224, 224, device=device, generator=generator).to(
                memory_format=torch.channels_last
            ),
            torch.randint(0, 1000, (batch,), device=device, generator=generator),
        )
        for _ in range(count)
    ]


def run_timed(program, args, iteration, extra=None):
    """Runs iteration(i) for args.warmup + args.steps iterations; prints the JSON line.

    extra: a callable returning more fields for the JSON line, called after the timed region.
    """
    mark = torch.cuda.nvtx.mark if args.nvtx_steps else None
    prof = torch_profiler(getattr(args, "torch_profiler", None))
    for i in range(args.warmup):
        iteration(i)
        if mark:
            mark(STEP_MARK)
        if prof:
            prof.step()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
    torch.cuda.synchronize()
    start = time.perf_counter()
    events[0].record()
    for i in range(args.steps):
        iteration(args.warmup + i)
        events[i + 1].record()
        if mark:
            mark(STEP_MARK)
        if prof:
            prof.step()
    torch.cuda.synchronize()
    wall_s = time.perf_counter() - start
    if prof:
        prof.stop()
    step_s = [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(args.steps)]
    result = {
        "program": program,
        "steps": args.steps,
        "batch": args.batch,
        "step_time_s_median": statistics.median(step_s),
        "step_time_s_min": min(step_s),
        "step_time_s_max": max(step_s),
        "wall_s": wall_s,
        "samples_per_s": args.steps * args.batch / wall_s,
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "step_times_s": step_s,
        # The process's kernel thread ids at the end (the main thread's is the pid): to check
        # that the trace names threads as /proc does.
        "pid": os.getpid(),
        "tids": sorted(int(t) for t in os.listdir("/proc/self/task")),
    }
    if extra is not None:
        result.update(extra())
    print(json.dumps(result), flush=True)
