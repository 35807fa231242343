#!/usr/bin/env python3
"""Samples, every INTERVAL ms until killed, each thread of the processes whose command line
contains PATTERN: its CPU time so far (/proc/PID/task/TID/schedstat, ns) and the CPU it last ran
on (/proc/.../stat field 39). One JSON line per sample to OUT; the first line names each CPU's
hyper-thread siblings. For bench/trace_overhead_device.sh (where the window's cost goes).

    python3 bench/thread_cpu_sampler.py PATTERN OUT [INTERVAL_MS]
"""
import glob
import json
import os
import sys
import time


def siblings():
    out = {}
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list"):
        cpu = int(path.split("/")[5][3:])
        out[cpu] = open(path).read().strip()
    return out


def pids(pattern):
    for d in glob.glob("/proc/[0-9]*"):
        if d == f"/proc/{os.getpid()}":
            continue
        try:
            if pattern in open(d + "/cmdline").read().replace("\0", " "):
                yield d
        except OSError:
            pass


def main():
    pattern, out_path = sys.argv[1], sys.argv[2]
    interval = float(sys.argv[3]) / 1e3 if len(sys.argv) > 3 else 0.02
    with open(out_path, "w") as out:
        out.write(json.dumps({"siblings": siblings(), "cpus": os.cpu_count()}) + "\n")
        while True:
            now = time.monotonic()
            rows = []
            for d in pids(pattern):
                for task in glob.glob(d + "/task/*"):
                    try:
                        stat = open(task + "/stat").read()
                        comm = stat[stat.index("(") + 1:stat.rindex(")")]
                        fields = stat[stat.rindex(")") + 2:].split()
                        ns = int(open(task + "/schedstat").read().split()[0])
                        rows.append([int(task.split("/")[-1]), comm, ns, int(fields[36])])
                    except (OSError, ValueError, IndexError):
                        pass
            if rows:
                out.write(json.dumps({"t": now, "tasks": rows}) + "\n")
                out.flush()
            time.sleep(interval)


if __name__ == "__main__":
    main()
