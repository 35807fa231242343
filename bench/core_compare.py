#!/usr/bin/env python3
"""Issue #19's comparison of quick studies (bench/core_compare_device.sh): burn rates per
precision and bench rows' samples/s of each study folder under DIR, side by side, with each
new run against the old one, and the studies' answers (their console) as a diff.

    python3 bench/core_compare.py DIR     # DIR/new-1, DIR/old, DIR/new-2 (+ NAME.out consoles)
"""
import difflib
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def burn_rates(folder):
    rates = {}
    for path in glob.glob(os.path.join(folder, "steps", "burn-*.json")):
        for target in (load(path) or {}).get("targets", []):
            for g in target.get("gemm", []):
                if g.get("status") == "measured":
                    rates[g["precision"]] = g["flop_per_s"]["median"]
    return rates


def bench_rates(folder):
    rates = {}
    for path in glob.glob(os.path.join(folder, "steps", "bench-*.json")):
        for row in (load(path) or {}).get("rows", []):
            if row.get("status") == "ok":
                rates[(row["model"], row["task"], row["mode"])] = row["samples_per_second"]
    return rates


def table(title, unit, runs, scale):
    names = list(runs)
    keys = sorted(set().union(*(r.keys() for r in runs.values())), key=str)
    print(f"\n{title} ({unit})")
    print(f'{"":28}' + "".join(f"{n:>10}" for n in names) + "".join(f"{n + '/old':>12}" for n in names if n != "old"))
    worst = 0.0
    for k in keys:
        label = k if isinstance(k, str) else " ".join(k)
        vals = [runs[n].get(k) for n in names]
        line = f"{label:28}" + "".join(f"{v / scale:10.1f}" if v else f'{"-":>10}' for v in vals)
        old = runs.get("old", {}).get(k)
        for n in names:
            if n == "old":
                continue
            v = runs[n].get(k)
            if v and old:
                worst = max(worst, abs(v / old - 1))
                line += f"{v / old:12.3f}"
            else:
                line += f'{"-":>12}'
        print(line)
    print(f"largest difference from the old run: {100 * worst:.1f} %")


def answers(path):
    try:
        with open(path) as f:
            return [line.rstrip() for line in f]
    except OSError:
        return []


def main():
    root = sys.argv[1]
    names = [n for n in ("new-1", "old", "new-2") if os.path.isdir(os.path.join(root, n))]
    folders = {n: os.path.join(root, n) for n in names}
    table("burn: GEMM rate, median", "TFLOP/s", {n: burn_rates(f) for n, f in folders.items()}, 1e12)
    table("bench: samples/s", "samples/s", {n: bench_rates(f) for n, f in folders.items()}, 1)
    if "old" in names and "new-1" in names:
        print("\nstudy answers, old -> new-1 (console):")
        diff = difflib.unified_diff(answers(os.path.join(root, "old.out")),
                                    answers(os.path.join(root, "new-1.out")), "old", "new-1", lineterm="", n=0)
        print("\n".join(diff) or "(same text)")


if __name__ == "__main__":
    main()
