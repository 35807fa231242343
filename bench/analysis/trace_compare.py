#!/usr/bin/env python3
"""Compare the GPU side of two Chrome traces (gpuscope-torch --trace, torch.profiler's
export_chrome_trace): kernel time per step by kernel name, GPU busy time and idle gaps.

usage: trace_compare.py OURS.json REFERENCE.json [--steps N] [--top K]

Both files hold N profiled steps (gpuscope-torch --trace-steps, default 3). Only the standard
library is needed, so a trace copied off the GPU machine can be read anywhere.
"""
import argparse
import collections
import json

GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


def gpu_events(path):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return [e for e in events
            if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES and "dur" in e]


def busy_and_span(events):
    """Microseconds with at least one GPU event running (union), and first start to last end."""
    intervals = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in events)
    if not intervals:
        return 0.0, 0.0
    busy, start, end = 0.0, intervals[0][0], intervals[0][1]
    for s, t in intervals[1:]:
        if s > end:
            busy += end - start
            start, end = s, t
        else:
            end = max(end, t)
    busy += end - start
    return busy, intervals[-1][1] - intervals[0][0]


def summarize(path, steps):
    events = gpu_events(path)
    by_name = collections.defaultdict(lambda: [0.0, 0])
    for e in events:
        entry = by_name[e["name"]]
        entry[0] += float(e["dur"]) / steps / 1e3  # ms per step
        entry[1] += 1
    busy, span = busy_and_span(events)
    return {
        "kernels": {name: {"ms_per_step": ms, "calls_per_step": n / steps}
                    for name, (ms, n) in by_name.items()},
        "gpu_ms_per_step": sum(ms for ms, _ in by_name.values()),
        "busy_ms_per_step": busy / steps / 1e3,
        "span_ms_per_step": span / steps / 1e3,
        "events": len(events),
    }


def short(name, width=90):
    return name if len(name) <= width else name[:width - 3] + "..."


def compare(ours_path, ref_path, steps=3, top=20, labels=("ours", "reference")):
    """Returns the comparison as text lines (and prints nothing)."""
    a, b = summarize(ours_path, steps), summarize(ref_path, steps)
    la, lb = labels
    lines = [f"per step ({steps} profiled): {la} / {lb}",
             f"  kernel+copy time {a['gpu_ms_per_step']:.2f} / {b['gpu_ms_per_step']:.2f} ms, "
             f"GPU busy {a['busy_ms_per_step']:.2f} / {b['busy_ms_per_step']:.2f} ms, "
             f"span {a['span_ms_per_step']:.2f} / {b['span_ms_per_step']:.2f} ms, "
             f"GPU events {a['events'] / steps:.0f} / {b['events'] / steps:.0f}"]
    if a["events"] == 0 or b["events"] == 0:
        lines.append("  (a trace without GPU events: was it profiled on a GPU?)")
    names = set(a["kernels"]) | set(b["kernels"])
    zero = {"ms_per_step": 0.0, "calls_per_step": 0.0}
    rows = []
    for name in names:
        ka, kb = a["kernels"].get(name, zero), b["kernels"].get(name, zero)
        rows.append((ka["ms_per_step"] - kb["ms_per_step"], name, ka, kb))
    rows.sort(key=lambda r: -abs(r[0]))
    lines.append(f"  largest differences ({la} - {lb}, ms per step; calls per step):")
    for diff, name, ka, kb in rows[:top]:
        lines.append(f"  {diff:+8.3f}  {ka['ms_per_step']:8.3f} ({ka['calls_per_step']:5.0f})"
                     f"  {kb['ms_per_step']:8.3f} ({kb['calls_per_step']:5.0f})  {short(name)}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ours")
    parser.add_argument("reference")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    print("\n".join(compare(args.ours, args.reference, args.steps, args.top)))


if __name__ == "__main__":
    main()
