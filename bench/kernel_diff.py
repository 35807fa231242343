#!/usr/bin/env python3
"""The GPU time of each kernel per step in gpuscope trace runs, side by side (issue 18: what the
data-parallel step spends beyond the one-GPU step).

    python3 bench/kernel_diff.py LABEL=RUN_DIR [LABEL=RUN_DIR ...] [--device N] [--top K]

RUN_DIR is a `gpuscope trace -o` folder (its trace.json and summary.json). For each run: the
traced steps' median wall time, the GPU's busy time per step on device N (default 0), and per
kernel name its time and launches per step. The table lists the K kernels (default 25) whose time
per step differs most from the first run's, then every run's total by kernel class.
"""
import json
import statistics
import sys
from collections import defaultdict

GPU_TRACK_PID = 1 << 30  # src/trace/trace_export.h kGpuTrackPid


def classify(name):
    n = name.lower()
    if "nccl" in n:
        return "nccl"
    if any(k in n for k in ("gemm", "sm90_xmma", "cutlass", "cublas", "nvjet", "matmul")):
        return "gemm"
    if "flash" in n or "fmha" in n or "attention" in n:
        return "attention"
    if "adam" in n or "multi_tensor" in n:
        return "optimizer"
    if "copy" in n or "memcpy" in n:
        return "copy"
    if "reduce" in n:
        return "reduce"
    return "other"


def load(path, device):
    with open(f"{path}/trace.json") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    steps = [e for e in events if e.get("ph") == "X" and e.get("cat") == "step"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
               and e.get("pid") == GPU_TRACK_PID + device]
    if steps:
        lo = min(e["ts"] for e in steps)
        hi = max(e["ts"] + e["dur"] for e in steps)
        kernels = [e for e in kernels if lo <= e["ts"] < hi]
    n = max(len(steps), 1)
    by_name = defaultdict(lambda: [0.0, 0])
    for e in kernels:
        by_name[e["name"]][0] += e["dur"] / 1e3 / n  # ms per step
        by_name[e["name"]][1] += 1 / n
    wall = statistics.median(e["dur"] / 1e3 for e in steps) if steps else float("nan")
    return {"steps": len(steps), "wall_ms": wall, "kernels": by_name}


def main(argv):
    device, top, runs = 0, 25, []
    it = iter(argv)
    for a in it:
        if a == "--device":
            device = int(next(it))
        elif a == "--top":
            top = int(next(it))
        else:
            label, _, path = a.partition("=")
            runs.append((label, load(path, device)))
    if not runs:
        print(__doc__)
        return 2
    print(f"device {device}")
    for label, r in runs:
        busy = sum(v[0] for v in r["kernels"].values())
        print(f"{label:>10}: {r['steps']} steps, median step {r['wall_ms']:.2f} ms, "
              f"kernel time {busy:.2f} ms/step, {sum(v[1] for v in r['kernels'].values()):.0f} "
              f"kernels/step")
    base = runs[0][1]["kernels"]
    names = set().union(*(r["kernels"].keys() for _, r in runs))
    spread = lambda k: max(abs(r["kernels"].get(k, [0, 0])[0] - base.get(k, [0, 0])[0]) for _, r in runs)
    print(f"\n{'kernel (ms/step, launches/step)':60}" + "".join(f"{l:>18}" for l, _ in runs))
    for k in sorted(names, key=spread, reverse=True)[:top]:
        cells = "".join(f"{r['kernels'].get(k, [0, 0])[0]:10.3f} {r['kernels'].get(k, [0, 0])[1]:6.1f} "
                        for _, r in runs)
        print(f"{k[:60]:60}{cells}")
    print(f"\n{'class (ms/step)':20}" + "".join(f"{l:>12}" for l, _ in runs))
    classes = sorted({classify(k) for k in names})
    for c in classes:
        cells = "".join(f"{sum(v[0] for k, v in r['kernels'].items() if classify(k) == c):12.3f}"
                        for _, r in runs)
        print(f"{c:20}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
