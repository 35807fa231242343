#!/usr/bin/env python3
"""burn vs PyTorch, side by side on one GPU, in one process.

For each precision: our gpuscope-burn-worker (cuBLASLt, every result verified), then PyTorch at
the same size on random data (torch.matmul; torch._scaled_mm for fp8; torch._int_mm for int8),
both as the median of ~1 s windows timed with CUDA events. Then device-memory copy bandwidth
(ours vs tensor.copy_), host<->device copies pinned/pageable (ours vs tensor.copy_ and
.to(non_blocking=True)), and a run with --inject-fault that must exit 1 and name the GPU.
Prints a table of ours / torch ratios last; writes the raw JSON lines and summary.json to --out.

Usage: bench/burn_vs_torch.py --worker PATH [--out DIR] [--duration S] [--size N]
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import torch

PRECISIONS = ["fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"]
GEMM_TARGET = 0.98  # issue 4: each precision >= 0.98x PyTorch
PINNED_H2D_TARGET = 0.97  # issue 4: pinned host->device >= 0.97x PyTorch
FP8_SCALE_A, FP8_SCALE_B = 0.5, 0.25  # as the worker (src/capability/gemm_spec.cc)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Our worker


def run_worker(worker, args, out_dir, tag, timeout=240):
    """Runs the worker; returns (exit code, JSON events). Saves its stdout as <tag>.jsonl."""
    cmd = [worker] + args
    log(f"$ {' '.join(cmd)}")
    start = time.time()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        proc = subprocess.CompletedProcess(cmd, -9, e.stdout or "", (e.stderr or "") + "\nTIMEOUT")
        if isinstance(proc.stdout, bytes):
            proc.stdout, proc.stderr = proc.stdout.decode(), proc.stderr.decode()
    with open(os.path.join(out_dir, f"{tag}.jsonl"), "w") as f:
        f.write(proc.stdout)
    with open(os.path.join(out_dir, "worker_stderr.log"), "a") as f:
        f.write(f"$ {' '.join(cmd)}\n{proc.stderr}\n")
    events = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line:
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                log(f"  not JSON: {line[:200]}")
    log(f"  exit {proc.returncode} after {time.time() - start:.1f} s, {len(events)} lines")
    for line in proc.stderr.splitlines()[-4:]:
        log(f"  | {line}")
    return proc.returncode, events


def of_type(events, kind):
    return [e for e in events if e.get("type") == kind]


# --------------------------------------------------------------------------------------------
# nvidia-smi sampling (power, SM clock, temperature) to explain differences between phases


class SmiSampler:
    FIELDS = "power.draw,clocks.sm,temperature.gpu,clocks_event_reasons.active"

    def __init__(self, path):
        self.samples = []  # (host time, power W, SM clock MHz, temperature C, reasons)
        self.file = open(path, "w")
        try:
            self.proc = subprocess.Popen(
                ["nvidia-smi", f"--query-gpu={self.FIELDS}", "--format=csv,noheader,nounits",
                 "-lms", "250"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except OSError:
            self.proc = None
            return
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            now = time.time()
            self.file.write(f"{now:.3f}, {line}")
            parts = [p.strip() for p in line.split(",")]
            try:
                self.samples.append((now, float(parts[0]), float(parts[1]), float(parts[2]),
                                     parts[3] if len(parts) > 3 else ""))
            except (ValueError, IndexError):
                pass

    def phase(self, start, end):
        inside = [x for x in self.samples if start <= x[0] <= end]
        if not inside:
            return None
        return {"power_w": statistics.median(x[1] for x in inside),
                "sm_clock_mhz": statistics.median(x[2] for x in inside),
                "temperature_c": max(x[3] for x in inside),
                "reasons": sorted({x[4] for x in inside}), "samples": len(inside)}

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
        self.file.close()


# --------------------------------------------------------------------------------------------
# PyTorch


def torch_gemm_setup(precision, n, device):
    """Two random input sets and a function doing one GEMM on set i."""
    g = torch.Generator(device=device)
    g.manual_seed(1234)

    def uniform(dtype, scale=1.0):
        # Drawn in float64 for fp64 (float32 draws leave 29 mantissa bits zero, which lowers the
        # multipliers' power and flatters the rate), float32 otherwise; then rounded to dtype.
        wide = torch.float64 if dtype == torch.float64 else torch.float32
        x = torch.rand((n, n), generator=g, device=device, dtype=wide) * 2 - 1
        return (x * scale).to(dtype)

    torch.set_float32_matmul_precision("highest")
    if precision in ("fp64", "fp32", "tf32", "fp16", "bf16"):
        dtype = {"fp64": torch.float64, "fp32": torch.float32, "tf32": torch.float32,
                 "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
        if precision == "tf32":
            torch.set_float32_matmul_precision("high")
        sets = [(uniform(dtype), uniform(dtype)) for _ in range(2)]
        outs = [torch.empty((n, n), device=device, dtype=dtype) for _ in range(2)]

        def gemm(i):
            a, b = sets[i % 2]
            torch.matmul(a, b, out=outs[i % 2])

        return gemm, "torch.matmul"
    if precision == "fp8":
        # _scaled_mm wants A row-major and B column-major (B = Bt.t()): a TN GEMM, as ours.
        sets = [(uniform(torch.float8_e4m3fn, 2.0), uniform(torch.float8_e4m3fn, 2.0).t())
                for _ in range(2)]
        sa = torch.tensor(FP8_SCALE_A, device=device)
        sb = torch.tensor(FP8_SCALE_B, device=device)

        def gemm(i):
            a, b = sets[i % 2]
            torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

        return gemm, "torch._scaled_mm (e4m3, bf16 out)"
    if precision == "int8":
        def ints():
            return torch.randint(-127, 128, (n, n), generator=g, device=device,
                                 dtype=torch.int8)

        sets = [(ints(), ints().t()) for _ in range(2)]  # B column-major: TN, as ours

        def gemm(i):
            a, b = sets[i % 2]
            torch._int_mm(a, b)

        try:
            gemm(0)
        except RuntimeError:  # an older layout rule: both row-major
            sets = [(a, b.contiguous()) for a, b in sets]
        return gemm, "torch._int_mm"
    raise ValueError(precision)


def torch_gemm_rate(precision, n, duration, window=1.0):
    """Median FLOP/s over ~1 s windows (CUDA events around a batch of GEMMs)."""
    device = torch.device("cuda")
    gemm, what = torch_gemm_setup(precision, n, device)
    flop = 2.0 * n * n * n
    for i in range(3):
        gemm(i)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calib = 10
    start.record()
    for i in range(calib):
        gemm(i)
    stop.record()
    stop.synchronize()
    per_gemm = start.elapsed_time(stop) / 1e3 / calib
    count = max(1, round(window / per_gemm))
    rates = []
    timed_start = time.time()
    for _ in range(max(1, round(duration / window))):
        start.record()
        for i in range(count):
            gemm(i)
        stop.record()
        stop.synchronize()
        rates.append(count * flop / (start.elapsed_time(stop) / 1e3))
    return {"api": what, "windows": len(rates), "median": statistics.median(rates),
            "min": min(rates), "max": max(rates), "timed": (timed_start, time.time())}


def time_events(fn, repeats, warmup=2):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def time_host(fn, repeats, warmup=2):
    for _ in range(warmup):
        fn()
        torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def repeats_for(size):  # as src/capability/host_link.cc
    return max(10, min(50, (256 << 20) // size))


def torch_device_copy(buffer_bytes, repeats=20):
    src = torch.empty(buffer_bytes, dtype=torch.uint8, device="cuda").random_(0, 255)
    dst = torch.empty_like(src)
    t = time_events(lambda: dst.copy_(src), repeats, warmup=3)
    return 2 * buffer_bytes / t  # bytes read + written, as ours


def torch_host_link(sizes):
    """bytes/s per (memory, direction, size): tensor.copy_ (and .to for pinned H2D)."""
    biggest = max(sizes)
    dev = torch.empty(biggest, dtype=torch.uint8, device="cuda")
    pinned = torch.empty(biggest, dtype=torch.uint8, pin_memory=True).fill_(90)
    pageable = torch.empty(biggest, dtype=torch.uint8).fill_(90)
    rows = {}
    for size in sizes:
        d, p, q = dev[:size], pinned[:size], pageable[:size]
        r = repeats_for(size)
        rows[("pinned", "h2d", size)] = size / time_events(
            lambda: d.copy_(p, non_blocking=True), r)
        rows[("pinned", "d2h", size)] = size / time_events(
            lambda: p.copy_(d, non_blocking=True), r)
        rows[("pageable", "h2d", size)] = size / time_host(lambda: d.copy_(q), r)
        rows[("pageable", "d2h", size)] = size / time_host(lambda: q.copy_(d), r)
        rows[("pinned_to", "h2d", size)] = size / time_events(
            lambda: p.to("cuda", non_blocking=True), r)
    return rows


class PinnedLink:
    """torch's pinned copies, buffers kept across rounds: bytes/s per (direction, size)."""

    def __init__(self, biggest):
        self.dev = torch.empty(biggest, dtype=torch.uint8, device="cuda")
        self.host = torch.empty(biggest, dtype=torch.uint8, pin_memory=True).fill_(90)

    def measure(self, sizes):
        rows = {}
        for size in sizes:
            d, p = self.dev[:size], self.host[:size]
            r = repeats_for(size)
            rows[f"h2d/{size}"] = size / time_events(lambda: d.copy_(p, non_blocking=True), r)
            rows[f"d2h/{size}"] = size / time_events(lambda: p.copy_(d, non_blocking=True), r)
        return rows


ROUND_SIZES = [256 << 20, 1 << 30]


def pinned_rounds(worker, out_dir, rounds=3):
    """Pinned copies measured in alternation, ours then torch, `rounds` times: host-link rates
    drift between processes and minutes by a few percent, so one shot of each is not a
    comparison."""
    link = PinnedLink(max(ROUND_SIZES))
    result = []
    for r in range(rounds):
        _, events = run_worker(worker, ["--precision", "none", "--host-link",
                                        "--host-link-min-bytes", str(min(ROUND_SIZES)),
                                        "--host-link-max-bytes", str(max(ROUND_SIZES))],
                               out_dir, f"host_link_round{r}")
        ours = {f"{e['direction']}/{e['size_bytes']}": e["bytes_per_second"]
                for e in of_type(events, "host_link") if e["memory"] == "pinned"}
        result.append({"ours": ours, "torch": link.measure(ROUND_SIZES)})
    return result


# --------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True)
    ap.add_argument("--out", default="build/burn-device-out")
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--precisions", default=",".join(PRECISIONS))
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-link", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    n, duration = args.size, args.duration
    summary = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
               "torch": torch.__version__, "cuda": torch.version.cuda,
               "gpu": torch.cuda.get_device_name(0), "size": n, "duration": duration,
               "command": " ".join(sys.argv)}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,power.limit",
                              "--format=csv,noheader"], capture_output=True, text=True)
        summary["driver"] = smi.stdout.strip()
    except OSError:
        summary["driver"] = "unknown"
    log(f"GPU {summary['gpu']}, driver/power limit {summary['driver']}, torch {torch.__version__}")

    _, listing = run_worker(args.worker, ["--list"], args.out, "list")
    summary["device"] = next(iter(of_type(listing, "device")), None)

    sampler = SmiSampler(os.path.join(args.out, "nvidia_smi_samples.csv"))
    gemm_rows = []
    for p in args.precisions.split(","):
        code, events = run_worker(args.worker, ["--precision", p, "--duration", str(duration),
                                                "--size", str(n)], args.out, f"gemm_{p}")
        result = next(iter(of_type(events, "gemm_result")), None)
        skipped = next(iter(of_type(events, "skipped")), None)
        row = {"precision": p, "exit": code}
        if result:
            windows = of_type(events, "gemm_window")
            flop = sum(w["flop"] for w in windows)
            wall = sum(w["wall_seconds"] for w in windows)
            ended = time.time()
            row["ours_smi"] = sampler.phase(ended - windows[-1]["elapsed_seconds"], ended) \
                if windows else None
            row.update(ours=result["tflops"]["median"] * 1e12,
                       ours_wall=flop / wall if wall else 0.0,
                       ok=result["verification"]["ok"],
                       gemms_checked=result["verification"]["gemms_checked"],
                       tiles=result["verification"]["reference_tiles_checked"],
                       max_error=result["verification"]["reference_max_error"],
                       algorithm=result["algorithm"])
        elif skipped:
            row["skipped"] = skipped["reason"]
        try:
            t = torch_gemm_rate(p, n, duration)
            row["torch"] = t["median"]
            row["torch_api"] = t["api"]
            row["torch_smi"] = sampler.phase(*t["timed"])
            log(f"  torch {p}: {t['median'] / 1e12:.1f} TFLOP/s ({t['api']})")
        except Exception as e:  # noqa: BLE001 - report, keep going
            row["torch_error"] = repr(e)
            log(f"  torch {p} failed: {e!r}")
        torch.cuda.empty_cache()
        gemm_rows.append(row)
    sampler.stop()
    summary["gemm"] = gemm_rows

    if not args.skip_memory:
        _, events = run_worker(args.worker, ["--precision", "none", "--memory"], args.out,
                               "memory")
        mem = {e["kernel"]: e for e in of_type(events, "memory_bw")}
        summary["memory"] = mem
        if "copy" in mem:
            summary["torch_copy"] = torch_device_copy(mem["copy"]["buffer_bytes"])
        torch.cuda.empty_cache()

    if not args.skip_link:
        _, events = run_worker(args.worker, ["--precision", "none", "--host-link"], args.out,
                               "host_link")
        links = of_type(events, "host_link")
        summary["host_link"] = links
        summary["overlap"] = of_type(events, "overlap")
        sizes = [4 << 20, 64 << 20, 256 << 20, 1 << 30]
        summary["torch_link"] = {f"{m}/{d}/{s}": v
                                 for (m, d, s), v in torch_host_link(sizes).items()}
        torch.cuda.empty_cache()
        summary["pinned_rounds"] = pinned_rounds(args.worker, args.out)
        torch.cuda.empty_cache()

    code, events = run_worker(args.worker, ["--precision", "bf16", "--duration", "3",
                                            "--inject-fault", "--inject-fault-after", "1"],
                              args.out, "inject_fault")
    errors = of_type(events, "error")
    dev = summary["device"] or {}
    named = any(dev.get("uuid", "?") in e.get("message", "") and
                e.get("device", {}).get("uuid") == dev.get("uuid") for e in errors)
    summary["inject_fault"] = {"exit": code, "errors": errors,
                               "pass": code == 1 and named and bool(errors)}

    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print_table(summary)


def print_table(s):
    out = []
    out.append(f"\nburn vs PyTorch — {s['gpu']} (driver, power limit: {s['driver']}), torch "
               f"{s['torch']}, CUDA {s['cuda']}, n={s['size']}, {s['duration']} s per precision, "
               f"{s['date']}")
    out.append(f"{'precision':9} {'ours TFLOP/s':>12} {'ours wall*':>10} {'torch':>8} "
               f"{'ratio':>6} {'target':>6}  verification")
    all_pass = True
    for r in s["gemm"]:
        if "ours" not in r:
            out.append(f"{r['precision']:9} {'skipped: ' + r.get('skipped', '?')}")
            all_pass = False
            continue
        torch_rate = r.get("torch")
        ratio = r["ours"] / torch_rate if torch_rate else float("nan")
        ok = torch_rate is not None and ratio >= GEMM_TARGET
        all_pass &= ok and r["ok"]
        ver = (f"ok, {r['gemms_checked']} GEMMs, {r['tiles']} tiles, max err "
               f"{r['max_error']:.1e}" if r["ok"] else "FAILED")
        out.append(f"{r['precision']:9} {r['ours'] / 1e12:12.1f} {r['ours_wall'] / 1e12:10.1f} "
                   f"{(torch_rate or 0) / 1e12:8.1f} {ratio:6.3f} {'PASS' if ok else 'MISS':>6}"
                   f"  {ver}")
    out.append("  * ours wall: FLOP over the whole window, the verification kernels included")
    out.append("\nduring the timed windows (nvidia-smi every 250 ms; medians; max temperature)")
    for r in s["gemm"]:
        for who in ("ours", "torch"):
            m = r.get(f"{who}_smi")
            if m:
                out.append(f"  {r['precision']:5} {who:5} {m['power_w']:6.0f} W "
                           f"{m['sm_clock_mhz']:6.0f} MHz {m['temperature_c']:4.0f} C  "
                           f"clock-event reasons {','.join(m['reasons'])}")
    if "memory" in s:
        out.append("\ndevice memory (GB/s; copy counts bytes read + written)")
        for k, e in s["memory"].items():
            variant = f", kernel {e['variant']}" if e.get("variant") else ""
            out.append(f"  ours {k:7} {e['bytes_per_second'] / 1e9:8.0f}   buffer "
                       f"{e['buffer_bytes'] >> 20} MiB{variant}")
        if "torch_copy" in s and "copy" in s["memory"]:
            ours = s["memory"]["copy"]["bytes_per_second"]
            out.append(f"  torch copy_   {s['torch_copy'] / 1e9:8.0f}   ratio ours copy / torch "
                       f"{ours / s['torch_copy']:.3f}")
    if "host_link" in s:
        out.append("\nhost link (GB/s): ours / torch copy_")
        ours = {(e["memory"], e["direction"], e["size_bytes"]): e["bytes_per_second"]
                for e in s["host_link"]}
        for key, t in sorted(s["torch_link"].items(), key=lambda kv: (kv[0].split("/")[0],
                                                                      kv[0].split("/")[1],
                                                                      int(kv[0].split("/")[2]))):
            m, d, size = key.split("/")
            size = int(size)
            o = ours.get((m if m != "pinned_to" else "pinned", d, size))
            label = f"{m:9} {d} {size >> 20:5} MiB"
            if o is None:
                continue
            ratio = o / t
            vs = "  (torch .to(non_blocking=True))" if m == "pinned_to" else ""
            out.append(f"  {label}  ours {o / 1e9:7.1f}  torch {t / 1e9:7.1f}  ratio "
                       f"{ratio:6.3f}{vs}")
        for e in s["host_link"]:
            if e["direction"] == "bidirectional" and e["size_bytes"] == 1 << 30:
                out.append(f"  ours bidirectional {e['memory']:8} 1 GiB: "
                           f"{e['bytes_per_second'] / 1e9:.1f} GB/s (both directions summed)")
        rounds = s.get("pinned_rounds", [])
        if rounds:
            out.append(f"\npinned copies, ours and torch alternating, {len(rounds)} rounds "
                       f"(GB/s per round; ratio of the medians)")
            for key in rounds[0]["torch"]:
                ours_r = [r["ours"].get(key, 0.0) for r in rounds]
                torch_r = [r["torch"][key] for r in rounds]
                ratio = statistics.median(ours_r) / statistics.median(torch_r)
                d, size = key.split("/")
                target = ""
                if d == "h2d":
                    ok = ratio >= PINNED_H2D_TARGET
                    all_pass &= ok
                    target = " PASS" if ok else " MISS"
                out.append(f"  {d} {int(size) >> 20:5} MiB  ours "
                           f"{' '.join(f'{x / 1e9:5.1f}' for x in ours_r)}  torch "
                           f"{' '.join(f'{x / 1e9:5.1f}' for x in torch_r)}  ratio {ratio:6.3f}"
                           f"{target}")
        if s.get("overlap"):
            out.append("\ncopy (256 MiB, host->device) overlapped with a kernel of the same length")
        for e in s.get("overlap", []):
            out.append(f"  overlap {e['memory']:8}: copy {e['copy_seconds'] * 1e3:.1f} ms, "
                       f"compute {e['compute_seconds'] * 1e3:.1f} ms, both "
                       f"{e['both_seconds'] * 1e3:.1f} ms -> efficiency {e['efficiency']:.2f}")
    f = s["inject_fault"]
    out.append(f"\ninjected fault: worker exit {f['exit']} (want 1), error names the device: "
               f"{'PASS' if f['pass'] else 'FAIL'}")
    for e in f["errors"][:1]:
        out.append(f"  {e.get('message', '')[:300]}")
    all_pass &= f["pass"]
    out.append(f"\nall targets met: {'YES' if all_pass else 'NO'}")
    print("\n".join(out), flush=True)


if __name__ == "__main__":
    main()
