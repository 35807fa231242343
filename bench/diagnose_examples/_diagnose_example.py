"""What the diagnose example programs share: options, a ResNet-18-like model, the timing.

Each example has one planted flaw and a fixed twin: the same program with `--fixed`, which
turns that one flaw off and changes nothing else. Both time themselves the same way (as
bench/trace_examples/_trace_example.py does, so that `gpuscope trace` step times compare):
  - `--warmup` untimed iterations first (cuDNN, the allocator, a CUDA graph capture settle);
  - torch.cuda.synchronize(), the host clock, then up to `--steps` iterations, stopping early
    once `--max-seconds` have passed on the host clock (checked between iterations, without
    synchronizing), synchronize(), the host clock: wall_s, samples_per_s = samples / wall_s;
  - a CUDA event recorded after each iteration (after the optimizer step, where the shim's
    step mark falls), read only at the end: step_time_s_median is the median interval between
    consecutive events. Recording an event adds no synchronization.
One JSON line last on stdout: {"program", "flaw", "variant" ("flawed"|"fixed"), "steps",
"batch", "step_time_s_median", "samples_per_s", ...}.

`--device cpu` runs the same code on the CPU with whatever needs CUDA left out (pinned memory,
CUDA graphs, streams, autocast to bf16 on the GPU): a smoke test of the program's logic on a
machine without a GPU, not a measurement. The median there comes from the host clock.

No torch.profiler and no NVTX of their own, except where a program says so (the CUDA-graph
twin marks its replays): under `gpuscope trace` the shim marks the steps (docs/python-shim.md).
"""
import argparse
import json
import statistics
import time

import torch

STEP_MARK = "gpuscope.step"


def parse_args(description, flaw, steps, batch, warmup=5, max_seconds=4.0, extra=None):
    """The common options; extra(parser) adds a program's own. Returns the parsed args."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--fixed",
        action="store_true",
        help="the fixed twin: %s turned off" % (flaw or "nothing (a control: no flaw)"),
    )
    parser.add_argument("--steps", type=int, default=steps, help="timed iterations at most")
    parser.add_argument("--batch", type=int, default=batch, help="samples per iteration")
    parser.add_argument("--warmup", type=int, default=warmup, help="untimed iterations first")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=max_seconds,
        help="stop the timed loop after this many seconds (0: no limit)",
    )
    parser.add_argument(
        "--device", default="cuda", choices=["cuda", "cpu"], help="cpu: a smoke test only"
    )
    parser.add_argument(
        "--nvtx-steps",
        action="store_true",
        help='mark each iteration with NVTX "%s" (for a run without the shim)' % STEP_MARK,
    )
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    if args.steps < 2 or args.batch < 1 or args.warmup < 0 or args.max_seconds < 0:
        parser.error("--steps must be >= 2, --batch >= 1, --warmup >= 0, --max-seconds >= 0")
    args.flaw = flaw or "none"
    args.variant = "control" if flaw is None else ("fixed" if args.fixed else "flawed")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("CUDA is not available: pass --device cpu for a smoke test")
    args.cuda = args.device == "cuda"
    if not args.cuda:
        torch.set_num_threads(1)  # a smoke test on a shared machine
    return args


def autocast(args, enabled=True):
    """bf16 autocast on the GPU; on the CPU (smoke test) nothing."""
    if args.cuda and enabled:
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", enabled=False)


class BasicBlock(torch.nn.Module):
    def __init__(self, inp, out, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(out)
        self.conv2 = torch.nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(out)
        self.down = None
        if stride != 1 or inp != out:
            self.down = torch.nn.Sequential(
                torch.nn.Conv2d(inp, out, 1, stride, bias=False), torch.nn.BatchNorm2d(out)
            )

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


def resnet18_like(args, classes=1000, width=64):
    """torchvision's resnet18 layout (stem, 4 stages of 2 basic blocks, pooled head), written
    here so that the programs run without torchvision (the CPU smoke test: 1/8 the width).
    width: the first stage's channels (64 as resnet18; the FLOPs go with its square)."""
    # (At least 8: 4 channels in channels-last crashed PyTorch 2.11 on the CPU, a heap corruption.)
    width = width if args.cuda else max(8, width // 8)
    layers = [
        torch.nn.Conv2d(3, width, 7, 2, 3, bias=False),
        torch.nn.BatchNorm2d(width),
        torch.nn.ReLU(inplace=True),
        torch.nn.MaxPool2d(3, 2, 1),
    ]
    inp = width
    for stage, out in enumerate([width, 2 * width, 4 * width, 8 * width]):
        layers += [BasicBlock(inp, out, 1 if stage == 0 else 2), BasicBlock(out, out, 1)]
        inp = out
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(inp, classes)]
    return torch.nn.Sequential(*layers)


def sgd(args, model, lr=0.1):
    """The examples' optimizer: SGD with momentum and weight decay, fused on the GPU."""
    return torch.optim.SGD(
        model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-5, fused=args.cuda
    )


def healthy_training(args, device, lr=0.1):
    """The healthy control's set-up: resnet18_like in channels-last with cudnn.benchmark on,
    sgd(), cross-entropy. Returns (model, optimizer, loss_fn)."""
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = resnet18_like(args).to(device).to(memory_format=torch.channels_last)
    return model, sgd(args, model, lr), torch.nn.CrossEntropyLoss()


def train_step(args, model, optimizer, loss_fn):
    """step(images, labels): one training step as the healthy control takes it (the forward
    under autocast(), the gradients set to None, the backward, the optimizer's step)."""

    def step(images, labels):
        with autocast(args):
            loss = loss_fn(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def vector_batches(args, device, width, count):
    """`count` (inputs, targets) pairs of random `width`-wide rows on `device`, to rotate."""
    generator = torch.Generator(device=device).manual_seed(1)
    return [
        (
            torch.randn(args.batch, width, device=device, generator=generator),
            torch.randn(args.batch, width, device=device, generator=generator),
        )
        for _ in range(count)
    ]


def image_batches(args, device, size=224, count=4, channels_last=True, classes=1000):
    """`count` batches of random images and labels already on `device`, to rotate (32x32 on
    the CPU)."""
    size = size if args.cuda else 32
    generator = torch.Generator(device=device).manual_seed(1)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    return [
        (
            torch.randn(args.batch, 3, size, size, device=device, generator=generator).to(
                memory_format=fmt
            ),
            torch.randint(0, classes, (args.batch,), device=device, generator=generator),
        )
        for _ in range(count)
    ]


def run_timed(args, program, iteration, samples_per_step=None, extra=None, mark_steps=False):
    """Runs iteration(i) for the warm-up, then the timed iterations; prints the JSON line.

    samples_per_step: defaults to args.batch. extra: a callable returning more JSON fields,
    called after the timed region. mark_steps: emit the NVTX step mark after each iteration
    (for steps the shim cannot see, e.g. CUDA-graph replays), as --nvtx-steps does.
    """
    samples = samples_per_step if samples_per_step is not None else args.batch
    mark = torch.cuda.nvtx.mark if (args.cuda and (args.nvtx_steps or mark_steps)) else None
    for i in range(args.warmup):
        iteration(i)
        if mark:
            mark(STEP_MARK)
    events = []
    host = []
    if args.cuda:
        events = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
        torch.cuda.synchronize()
    start = time.perf_counter()
    if args.cuda:
        events[0].record()
    done = 0
    for i in range(args.steps):
        iteration(args.warmup + i)
        if args.cuda:
            events[i + 1].record()
        host.append(time.perf_counter())
        if mark:
            mark(STEP_MARK)
        done += 1
        if args.max_seconds and host[-1] - start > args.max_seconds and done >= 2:
            break
    if args.cuda:
        torch.cuda.synchronize()
    wall_s = time.perf_counter() - start
    if args.cuda:
        step_s = [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(done)]
    else:
        step_s = [b - a for a, b in zip([start] + host[:-1], host)]
    result = {
        "program": program,
        "flaw": args.flaw,
        "variant": args.variant,
        "steps": done,
        "warmup": args.warmup,
        "batch": args.batch,
        "step_time_s_median": statistics.median(step_s),
        "step_time_s_min": min(step_s),
        "step_time_s_max": max(step_s),
        "wall_s": wall_s,
        "samples_per_s": done * samples / wall_s,
        "device": torch.cuda.get_device_name() if args.cuda else "cpu",
        "torch": torch.__version__,
    }
    if args.cuda:
        result["max_memory_allocated_bytes"] = torch.cuda.max_memory_allocated()
    if extra is not None:
        result.update(extra())
    print(json.dumps(result), flush=True)
    return result
