#!/usr/bin/env python3
"""Turns the trace folders of a `bench/diagnose_device.sh` run into labelled fixtures.

  fixtures_from_run.py RESULTS_DIR DEST [--trim TRIM_PY] [--steps N]

RESULTS_DIR holds what the run sent back (diagnose_gpu.txt, diagnose_results.jsonl,
diagnose_traces-N.tar.gz, and from `extra` diagnose_traces_fixed-N.tar.gz). For each example, its
flawed (or control) trace goes to DEST/<example>/, its fixed twin's to DEST/<example>_fixed/:
the record files (trimmed to the window's first N steps by TRIM_PY when given: the diagnose
fixtures' trim.py), telemetry.jsonl, summary.json, the program's own JSON line (own.json), the
command, and a README.md saying what it is, where and when it was recorded, and the gain the
fix measured (fixed/flawed) in the same run. trace.json is left out (it is made from the
records again by `gpuscope trace --analyse`).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import tarfile
import tempfile

FLAWS = {
    "healthy": "the healthy control: no planted flaw (diagnose must find nothing major)",
    "input_bound": "input-bound: DataLoader num_workers=0, CPU decoding/augmentation in the "
    "training process, pageable batches",
    "pageable_copies": "pageable, blocking host-to-device copies (154 MB a step, .to(device))",
    "sync_every_step": "synchronization every step (print(loss.item(), accuracy.item()))",
    "launch_bound": "launch-bound: tiny kernels (48 x Linear(256)+LayerNorm+GELU, batch 64), eager",
    "no_tensor_cores": "no tensor cores: fp32 GEMMs (8 x Linear(4096), batch 2048), TF32 off",
    "small_batch": "small batch: batch 8 on an 80 GB GPU",
    "cudnn_defaults": "cuDNN defaults: NCHW, cudnn.benchmark off, AMP bf16 convolutions",
    "unfused_optimizer": "unfused optimizer: AdamW(foreach=False, fused=False), ~290 tensors",
    "shared_gpu": "a shared GPU: another process (bf16 matmuls) on the same GPU",
}
FIXES = {
    "healthy": "(none)",
    "input_bound": "num_workers, pin_memory=True, persistent_workers=True, non_blocking=True",
    "pageable_copies": "pinned batches, non_blocking=True copies on a side stream one step ahead",
    "sync_every_step": "sums on the GPU, read every 100 steps; non_blocking token copies",
    "launch_bound": "the whole step captured in a CUDA graph (torch.cuda.graph), replayed",
    "no_tensor_cores": "AMP bf16 (torch.autocast)",
    "small_batch": "batch 256",
    "cudnn_defaults": "channels_last + cudnn.benchmark = True",
    "unfused_optimizer": "AdamW(fused=True)",
    "shared_gpu": "the GPU to itself (the other process stopped)",
}


def own_json(path):
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return {}
    for line in reversed(lines):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return {}


def copy_folder(src, dst, trim, steps):
    os.makedirs(dst, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(src, "gpuscope-trace-*.jsonl"))):
        target = os.path.join(dst, os.path.basename(path))
        if trim:
            subprocess.run(["python3", trim, path, target, "--steps", str(steps)], check=True)
        else:
            shutil.copyfile(path, target)
    for name in ("telemetry.jsonl", "summary.json", "command.txt"):
        if os.path.exists(os.path.join(src, name)):
            shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))
    own = own_json(os.path.join(src, "program.stdout"))
    with open(os.path.join(dst, "own.json"), "w") as f:
        json.dump(own, f, indent=1)
        f.write("\n")
    return own


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("dest")
    parser.add_argument("--trim", help="trim.py of tests/fixtures/diagnose (SRC DST --steps N)")
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    gpu = open(os.path.join(args.results, "diagnose_gpu.txt")).read().strip()
    ratios = {}
    for line in open(os.path.join(args.results, "diagnose_results.jsonl")):
        row = json.loads(line)
        ratios.setdefault(row["example"], row)  # no_tensor_cores: the bf16 fix, not TF32
    work = tempfile.mkdtemp()
    for archives, group in (("diagnose_traces-*.tar.gz", "traces"),
                            ("diagnose_traces_fixed-*.tar.gz", "fixed")):
        for path in sorted(glob.glob(os.path.join(args.results, archives))):
            with tarfile.open(path) as tar:
                tar.extractall(work, filter="data")
        for src in sorted(glob.glob(os.path.join(work, group, "*"))):
            if not os.path.isdir(src) or os.path.basename(src) == "plain":
                continue
            example = os.path.basename(src)
            name = example if group == "traces" else example + "_fixed"
            dst = os.path.join(args.dest, name)
            if os.path.exists(dst):
                shutil.rmtree(dst)
            own = copy_folder(src, dst, args.trim, args.steps)
            command = open(os.path.join(src, "command.txt")).read().strip()
            row = ratios.get(example, {})
            gain = ""
            if row.get("speedup_step_time"):
                gain = ("- Measured gain of the fix in the same session (plain runs, no tracing): "
                        "step time %.2fx, samples/s %.2fx (fixed / flawed; flawed %.2f ms, "
                        "fixed %.2f ms median step).\n" % (
                            row["speedup_step_time"], row["speedup_samples_per_s"],
                            row["flawed"]["step_time_s_median"] * 1e3,
                            row["fixed"]["step_time_s_median"] * 1e3))
            variant = "the fixed twin (--fixed)" if group == "fixed" else (
                "the control" if example == "healthy" else "the flawed program")
            label = FLAWS.get(example, example)
            with open(os.path.join(dst, "README.md"), "w") as f:
                f.write(
                    f"# {name}: {variant} of bench/diagnose_examples/{example}.py\n\n"
                    f"- Planted flaw: {label}.\n"
                    f"- Its fix (`--fixed`): {FIXES.get(example, '?')}.\n"
                    f"- This folder: {variant}; what diagnose should name first: "
                    f"{'nothing major' if group == 'fixed' or example == 'healthy' else label.split(':')[0]}.\n"
                    f"{gain}"
                    f"- The program's own median step time in the traced run: "
                    f"{own.get('step_time_s_median', 0) * 1e3:.2f} ms (own.json).\n"
                    f"- Recorded with: `{command}` (bench/diagnose_device.sh"
                    f"{' extra' if group == 'fixed' else ' run'}).\n"
                    f"- Record files trimmed to the window's first {args.steps} steps "
                    f"(tests/fixtures/diagnose/trim.py); summary.json is the untrimmed run's.\n\n"
                    f"GPU machine:\n\n```\n{gpu}\n```\n")
            print(f"{dst}: {sum(os.path.getsize(p) for p in glob.glob(dst + '/*')) // 1024} KiB")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
