#!/usr/bin/env python3
"""A short PyTorch training loop for `gpuscope monitor` on the GPU machine.

  monitor_workload.py train --seconds 20
      Trains a small transformer (bf16 autocast, AdamW) for that long. Reads NVML's total-energy
      counter itself (pynvml) at the start and end of the loop, with the wall-clock time of each
      read, and prints one JSON line: the direct counter reading to compare with gpuscope's.

  monitor_workload.py slowdown --gpuscope BIN --reps 5 --steps 300
      One process, torch warmed up once: times the same number of steps with no monitor, with
      `gpuscope monitor --interval 100` and with `--interval 20` running beside it, in an order
      that rotates each repetition. Prints a JSON line per segment and a summary line.

Times are host wall clock around torch.cuda.synchronize(), so they include everything a
monitor could disturb (launch latency, driver locks), not only kernel time.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

import torch


def build_model(device):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True, dropout=0.0
    )
    model = torch.nn.TransformerEncoder(layer, num_layers=8).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(16, 512, 1024, device=device)
    target = torch.randn(16, 512, 1024, device=device)
    return model, opt, x, target


def step(model, opt, x, target):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x), target)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def energy_mj():
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        value = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        pynvml.nvmlShutdown()
        return value
    except Exception as e:  # the comparison is then missing, the run still counts
        print(f"pynvml: {e}", file=sys.stderr)
        return None


def train(args):
    device = torch.device("cuda")
    model, opt, x, target = build_model(device)
    for _ in range(5):
        step(model, opt, x, target)
    torch.cuda.synchronize()
    e0, t0 = energy_mj(), time.time()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        loss = step(model, opt, x, target)
        steps += 1
        if steps % 20 == 0:
            print(f"step {steps} loss {loss.item():.4f}", flush=True)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    e1, t1 = energy_mj(), time.time()
    out = {
        "kind": "train",
        "steps": steps,
        "seconds": elapsed,
        "steps_per_s": steps / elapsed,
        "energy_start_unix_s": t0,
        "energy_end_unix_s": t1,
    }
    if e0 is not None and e1 is not None:
        out["nvml_energy_j"] = (e1 - e0) / 1000.0
    print(json.dumps(out), flush=True)


def timed_steps(model, opt, x, target, n):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        step(model, opt, x, target)
    torch.cuda.synchronize()
    return time.perf_counter() - start


def slowdown(args):
    device = torch.device("cuda")
    model, opt, x, target = build_model(device)
    timed_steps(model, opt, x, target, 30)  # warm-up: kernels chosen, clocks up
    modes = ["none", "100", "20"]
    results = {m: [] for m in modes}
    by_rep = {}
    for rep in range(args.reps):
        order = modes[rep % 3:] + modes[:rep % 3]
        for mode in order:
            monitor = None
            if mode != "none":
                monitor = subprocess.Popen(
                    [args.gpuscope, "monitor", "--no-tui", "--json", "--interval", mode],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            time.sleep(1.0)  # every mode waits the same: sampling under way, GPU equally idle
            # Untimed steps bring the clocks back up after the idle second, so that a segment
            # times steady state only (the idle second made the first steps the noisiest).
            timed_steps(model, opt, x, target, args.settle_steps)
            seconds = timed_steps(model, opt, x, target, args.steps)
            summary = None
            if monitor is not None:
                monitor.send_signal(signal.SIGINT)
                out, _ = monitor.communicate(timeout=30)
                # --json prints the summary after the per-second lines are suppressed
                try:
                    summary = json.loads(out[out.index("{"):])
                except ValueError:
                    summary = None
            record = {"kind": "segment", "rep": rep, "mode": mode, "steps": args.steps,
                      "seconds": seconds, "steps_per_s": args.steps / seconds}
            if summary:
                sampler = summary.get("sampler", {})
                record["sampler_cpu_per_tick_s"] = sampler.get("cpu_per_tick_s")
                record["sampler_wall_per_tick_s"] = sampler.get("wall_per_tick_s")
                record["sampler_ticks"] = sampler.get("ticks")
                record["sampler_missed"] = sampler.get("missed")
            results[mode].append(seconds)
            by_rep.setdefault(rep, {})[mode] = seconds
            print(json.dumps(record), flush=True)
    base = statistics.median(results["none"])
    summary = {"kind": "slowdown", "steps": args.steps, "reps": args.reps,
               "median_s": {m: statistics.median(v) for m, v in results.items()},
               "spread_s": {m: [min(v), max(v)] for m, v in results.items()}}
    summary["slowdown_percent"] = {
        m: 100.0 * (statistics.median(results[m]) / base - 1.0) for m in ("100", "20")}
    # Paired: each repetition's monitored time over its own unmonitored one (minutes apart at
    # most, so clock and temperature drift cancel better than across the whole run).
    paired = {m: [100.0 * (r[m] / r["none"] - 1.0) for r in by_rep.values()] for m in ("100", "20")}
    summary["paired_slowdown_percent_median"] = {m: statistics.median(v) for m, v in paired.items()}
    # Mean of the paired ratios with its standard error: the 95% interval is mean +- 1.96 SE.
    summary["paired_slowdown_percent_mean"] = {m: statistics.fmean(v) for m, v in paired.items()}
    summary["paired_slowdown_percent_se"] = {
        m: statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else None for m, v in paired.items()}
    summary["paired_slowdown_percent"] = paired
    print(json.dumps(summary), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    t = sub.add_parser("train")
    t.add_argument("--seconds", type=float, default=20.0)
    s = sub.add_parser("slowdown")
    s.add_argument("--gpuscope", required=True)
    s.add_argument("--reps", type=int, default=5)
    s.add_argument("--steps", type=int, default=300)
    s.add_argument("--settle-steps", type=int, default=25)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 3
    train(args) if args.what == "train" else slowdown(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
