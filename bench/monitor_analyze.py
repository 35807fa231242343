#!/usr/bin/env python3
"""Compares gpuscope monitor's energy with the workload's own NVML counter read.

  monitor_analyze.py RUN.jsonl WORKLOAD_STDOUT

The workload (monitor_workload.py train) read NVML's total-energy counter itself at the start
and end of its loop, with the wall-clock time of each read. From gpuscope's recording of the
same run this computes, over that same window: the counter's change as gpuscope sampled it
(interpolated at the window's edges), and the integral of the sampled power. Prints one JSON
object with all three and their ratios, plus gpuscope's own summary energy for the whole run.
"""
import json
import sys


def load(path):
    session, samples, summary = None, [], None
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec["type"] == "session":
                session = rec
            elif rec["type"] == "sample" and rec.get("gpu") == 0:
                samples.append(rec)
            elif rec["type"] == "summary":
                summary = rec["summary"]
    return session, samples, summary


def at(samples, key, t):
    pts = [(s["unix_s"], s[key]) for s in samples if key in s]
    for (ta, va), (tb, vb) in zip(pts, pts[1:]):
        if ta <= t <= tb:
            return va + (vb - va) * (t - ta) / (tb - ta)
    return None


def integral(samples, key, t0, t1):
    pts = [(s["unix_s"], s[key]) for s in samples if key in s]
    total = 0.0
    for (ta, va), (tb, vb) in zip(pts, pts[1:]):
        c0, c1 = max(ta, t0), min(tb, t1)
        if c1 <= c0:
            continue
        v0 = va + (vb - va) * (c0 - ta) / (tb - ta)
        v1 = va + (vb - va) * (c1 - ta) / (tb - ta)
        total += (v0 + v1) / 2 * (c1 - c0)
    return total


def main():
    session, samples, summary = load(sys.argv[1])
    workload = None
    with open(sys.argv[2]) as f:
        for line in f:
            if line.startswith('{"kind": "train"'):
                workload = json.loads(line)
    out = {"samples": len(samples)}
    if summary:
        g = summary["gpus"][0]
        out["gpuscope_summary_energy_j"] = g.get("energy_j")
        out["gpuscope_summary_seconds"] = g.get("energy_seconds")
        out["gpuscope_power_avg_w"] = g.get("power_avg_w")
        out["sampler"] = summary.get("sampler")
    if workload and "nvml_energy_j" in workload:
        t0, t1 = workload["energy_start_unix_s"], workload["energy_end_unix_s"]
        e0, e1 = at(samples, "energy_j", t0), at(samples, "energy_j", t1)
        direct = workload["nvml_energy_j"]
        out["window_s"] = t1 - t0
        out["direct_nvml_energy_j"] = direct
        if e0 is not None and e1 is not None:
            out["gpuscope_counter_energy_j"] = e1 - e0
            out["counter_ratio"] = (e1 - e0) / direct
        power = integral(samples, "power_w", t0, t1)
        out["gpuscope_power_integral_j"] = power
        out["power_integral_ratio"] = power / direct
        instant = integral(samples, "power_instant_w", t0, t1)
        if instant:
            out["gpuscope_instant_power_integral_j"] = instant
            out["instant_power_integral_ratio"] = instant / direct
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
