#!/usr/bin/env python3
"""gpuscope-torch against the Python reference models, in one call on one GPU.

For each case (model, task, precision mode, batch) this runs our C++ workload (gpuscope-torch,
a child process; its JSON lines are parsed) and then the Python reference in this process with
the same batch size, warm-up and timed windows: timm's vit_base_patch16_224, torchvision's
resnet50, or a plain PyTorch GPT-2 small (nanoGPT-style, defined below). The reference runs
eagerly (torch.optim.AdamW with its default foreach implementation, torch.amp.GradScaler for
fp16 AMP) and, where a case asks, under torch.compile with AdamW(fused=True). It prints a table
of samples/s, peak memory and the ratios ours / reference, and writes every number as JSON.

Both sides time the same way: warm-up steps, then windows of steps between CUDA events, samples/s
being the median over windows; peak memory is counted from the end of the warm-up. Inputs are
random synthetic batches on the GPU, two sets used in turn.

Usage (on the GPU machine, through bench/torch_device.sh):
  python3 bench/torch_vs_timm.py --bin build/torch-device/gpuscope-torch --plan vit_train
"""
import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# name: (autocast dtype, parameter dtype, tf32)
MODES = {
    "fp32": (None, torch.float32, False),
    "tf32": (None, torch.float32, True),
    "amp_fp16": (torch.float16, torch.float32, False),
    "amp_bf16": (torch.bfloat16, torch.float32, False),
    "fp16": (None, torch.float16, False),
    "bf16": (None, torch.bfloat16, False),
    # PyTorch has no built-in fp8 training: our fp8 is compared with the reference's AMP bf16.
    "fp8": (torch.bfloat16, torch.float32, False),
}
PYTHON_NAMES = {"vit_b16": "timm vit_base_patch16_224", "resnet50": "torchvision resnet50",
                "gpt2": "plain PyTorch GPT-2"}


class GPT2Block(nn.Module):
    def __init__(self, width=768, heads=12):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.c_attn = nn.Linear(width, 3 * width)
        self.attn_proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.c_fc = nn.Linear(width, 4 * width)
        self.mlp_proj = nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    """GPT-2 small as nanoGPT writes it: 124,439,808 parameters, tied head, no dropout."""

    def __init__(self, vocab=50257, context=1024, width=768, depth=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.h = nn.ModuleList(GPT2Block(width) for _ in range(depth))
        self.ln_f = nn.LayerNorm(width)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def python_model(model):
    if model == "vit_b16":
        import timm
        return timm.create_model("vit_base_patch16_224", pretrained=False)
    if model == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None)
    return GPT2()


def python_batch(model, batch, dtype, seq_len, channels_last):
    if model == "gpt2":
        tokens = torch.randint(50257, (batch, seq_len + 1), device="cuda")
        return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    return x, torch.randint(1000, (batch,), device="cuda")


def loss_of(model, logits, target):
    if model == "gpt2":
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
    return F.cross_entropy(logits, target)


def timed(step, inputs, batch, warmup, windows, steps):
    """Warm-up, then `windows` windows of `steps` steps between CUDA events."""
    losses = []
    for i in range(warmup):
        losses.append(step(*inputs[i % len(inputs)]))
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    timing_start_us = time.time_ns() // 1000  # where memory_peak.py searches from
    rates, step_times, i = [], [], warmup
    for _ in range(windows):
        events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
        events[0].record()
        for s in range(steps):
            losses.append(step(*inputs[i % len(inputs)]))
            events[s + 1].record()
            i += 1
        events[-1].synchronize()
        times = [events[s].elapsed_time(events[s + 1]) / 1e3 for s in range(steps)]
        step_times += times
        rates.append(batch * steps / sum(times))
    torch.cuda.synchronize()
    losses = [float(l) for l in losses if l is not None]
    return {
        "samples_per_second": statistics.median(rates),
        "window_samples_per_second": rates,
        "step_seconds_median": statistics.median(step_times),
        "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
        "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "timing_start_unix_us": timing_start_us,
    }


def run_python(case, compiled, diagnose=None):
    """diagnose: a path prefix; the allocator history (PREFIX.pickle, recorded from before the
    model reaches the GPU) and a trace of 3 steps after the timed ones (PREFIX.trace.json)."""
    model_name, task, mode, batch = case["model"], case["task"], case["mode"], case["batch"]
    if diagnose:
        torch.cuda.memory._record_memory_history(context=None, max_entries=2_000_000)
    autocast_dtype, param_dtype, tf32 = MODES[mode]
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    channels_last = model_name == "resnet50"
    model = python_model(model_name).cuda().to(param_dtype)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    image_dtype = param_dtype
    inputs = [python_batch(model_name, batch, image_dtype, case.get("seq_len", 1024),
                           channels_last) for _ in range(2)]
    forward = torch.compile(model) if compiled else model
    amp = autocast_dtype is not None

    if task == "train":
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01,
                                      fused=True if compiled else None)
        scaler = torch.amp.GradScaler("cuda") if mode == "amp_fp16" else None

        def step(x, y):
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=autocast_dtype or torch.float16, enabled=amp):
                loss = loss_of(model_name, forward(x), y)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            return loss.detach()
    else:
        model.eval()

        def step(x, y):
            with torch.inference_mode(), torch.autocast(
                    "cuda", dtype=autocast_dtype or torch.float16, enabled=amp):
                forward(x)
            return None

    start = time.time()
    result = timed(step, inputs, batch, case["warmup"], case["windows"], case["steps"])
    result["wall_seconds"] = time.time() - start
    if diagnose:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for i in range(3):
                step(*inputs[i % len(inputs)])
            torch.cuda.synchronize()
        prof.export_chrome_trace(diagnose + ".trace.json")
        torch.cuda.memory._dump_snapshot(diagnose + ".pickle")
        torch.cuda.memory._record_memory_history(enabled=None)
    del model, forward, inputs, step
    if task == "train":
        del optimizer
    gc.collect()
    torch.cuda.empty_cache()
    if compiled:
        torch._dynamo.reset()
    return result


def profile_python(case):
    """Kernel time of a few reference steps, largest first: what a fused step would save."""
    from torch.profiler import ProfilerActivity, profile
    captured = {}

    def grab(step, inputs, batch, warmup, windows, steps):
        for i in range(warmup):
            step(*inputs[i % 2])
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(3):
                step(*inputs[i % 2])
            torch.cuda.synchronize()
        captured["table"] = prof.key_averages().table(sort_by="cuda_time_total", row_limit=18,
                                                      max_name_column_width=70)
        return {}

    global timed
    saved, timed = timed, grab
    try:
        run_python(case, compiled=False)
    finally:
        timed = saved
    print(f'profile: {case["model"]} {case["task"]} {case["mode"]} b{case["batch"]}, 3 steps')
    print(captured.get("table", "(none)"), flush=True)


def run_ours(binary, case, extra, log):
    args = [binary, "--model", case["model"], "--task", case["task"], "--mode", case["mode"],
            "--batch", str(case["batch"]), "--warmup", str(case["warmup"]),
            "--windows", str(case["windows"]), "--steps", str(case["steps"])]
    if case["model"] == "gpt2":
        args += ["--seq-len", str(case.get("seq_len", 1024))]
    args += extra
    start = time.time()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    lines = []
    for l in proc.stdout.splitlines():
        try:
            lines.append(json.loads(l))
        except ValueError:
            pass
    log.write("$ " + " ".join(args) + "\n" + proc.stdout + proc.stderr)
    log.flush()
    out = {"exit_code": proc.returncode, "wall_seconds": time.time() - start}
    out["probes"] = [(l["batch"], l["outcome"]) for l in lines if l["type"] == "batch_probe"]
    for line in lines:
        if line["type"] == "result":
            out.update(line)
            out["loss_first"] = (line.get("loss") or {}).get("first")
            out["loss_last"] = (line.get("loss") or {}).get("last")
        elif line["type"] in ("skipped", "error"):
            out["problem"] = f'{line["type"]}: {line.get("reason") or line.get("message")}'
    if "samples_per_second" not in out and "problem" not in out:
        out["problem"] = (proc.stderr.strip().splitlines() or ["no result"])[-1]
    return out


def case(model, task, mode, batch, warmup=10, windows=5, steps=10, compiled=False,
         variants=(), **kw):
    """variants: extra gpuscope-torch runs of the same case, (label, [arguments])."""
    c = dict(model=model, task=task, mode=mode, batch=batch, warmup=warmup, windows=windows,
             steps=steps, compiled=compiled, variants=list(variants))
    c.update(kw)
    return c


# What each of our switches buys, measured on the cases with targets.
KEY_VARIANTS = [("graphs off", ["--graphs", "off"])]
INFER_VARIANTS = [("gelu epilogue", ["--gelu-epilogue", "on"]),
                  ("residual epilogue", ["--residual-epilogue", "on"]),
                  ("both epilogues", ["--gelu-epilogue", "on", "--residual-epilogue", "on"])]


ALL_MODES = ["fp32", "tf32", "amp_fp16", "amp_bf16", "fp16", "bf16", "fp8"]


def plan_cases(plan):
    slow = dict(warmup=3, windows=3, steps=5)  # fp32/tf32 steps take 4-10x longer
    short = dict(warmup=5, windows=3, steps=10)  # the modes without a target of their own
    cases = []
    if plan in ("key", "smoke"):
        cases += [case("vit_b16", "train", "amp_bf16", 160, compiled=plan == "key",
                       variants=KEY_VARIANTS),
                  case("vit_b16", "infer", "bf16", 1024, compiled=plan == "key",
                       variants=INFER_VARIANTS)]
    if plan in ("vit_train", "vit", "all"):
        for m in ALL_MODES:
            cases.append(case("vit_b16", "train", m, 160, compiled=m == "amp_bf16",
                              variants=KEY_VARIANTS if m == "amp_bf16" else (),
                              **(slow if m in ("fp32", "tf32") else
                                 {} if m == "amp_bf16" else short)))
    if plan in ("vit_infer", "vit", "all"):
        for m in ALL_MODES:
            cases.append(case("vit_b16", "infer", m, 1024, compiled=m == "bf16",
                              variants=INFER_VARIANTS if m == "bf16" else (),
                              **(slow if m in ("fp32", "tf32") else
                                 {} if m == "bf16" else short)))
    if plan in ("vit_train", "vit_infer", "vit"):
        # The cases with targets first, so that a deadline drops the others.
        return [c for c in cases if c["variants"]] + [c for c in cases if not c["variants"]]
    if plan == "kernels":
        # The own LayerNorm kernel and the patch embedding as a GEMM (session 4): each switched
        # off alone on the cases they change, and ViT training, where the patch GEMM also runs.
        cases += [case("vit_b16", "infer", "bf16", 1024, compiled=True, variants=[
                      ("own layer norm off", ["--own-layer-norm", "off"]),
                      ("patch gemm off", ["--patch-gemm", "off"]),
                      ("both off", ["--own-layer-norm", "off", "--patch-gemm", "off"]),
                      ("+ gelu epilogue", ["--gelu-epilogue", "on"])]),
                  case("vit_b16", "train", "amp_bf16", 160, compiled=True, variants=[
                      ("patch gemm off", ["--patch-gemm", "off"])]),
                  case("vit_b16", "infer", "fp16", 1024, **short),
                  case("vit_b16", "infer", "amp_bf16", 1024, **short),
                  case("gpt2", "infer", "bf16", 32, variants=[
                      ("own layer norm off", ["--own-layer-norm", "off"])]),
                  case("vit_b16", "train", "bf16", 160, **short)]
    if plan == "gaps":
        # What was left of the issue after session 4: GPT-2 pure bf16 training at 0.99x,
        # ResNet-50 bf16 inference's peak above eager, and GPT-2 inference with --batch auto.
        # diagnose: traces and allocator histories of ours (and of each variant listed) and of
        # the eager reference, compared.
        # Session 5: attention's q, k, v now split from qkv (a cheaper backward), so the
        # transformer training cases again.
        graphs_off = [("graphs off", ["--graphs", "off"])]
        # Then ResNet-50's bottleneck one layer per statement (its inference peak), and GPT-2's
        # cross-entropy on our kernel (--fused-loss, its gradient over the logits).
        unfused = [("fused loss off", ["--fused-loss", "off"])]
        short = dict(warmup=5, windows=3, steps=10)
        cases += [case("gpt2", "train", "bf16", 16, variants=unfused, diagnose=[]),
                  case("gpt2", "train", "amp_bf16", 16, variants=unfused),
                  case("gpt2", "train", "amp_fp16", 16, variants=unfused, **short),
                  case("gpt2", "train", "bf16", "auto", ours_only=True, **short),
                  case("gpt2", "train", "bf16", "auto", ours_only=True,
                       extra=["--fused-loss", "off"], **short)]
    if plan == "rest":
        # The cases the last "others" call's deadline cut (session 5), with the final binary.
        short = dict(warmup=5, windows=3, steps=10)
        cases += [case("gpt2", "train", "bf16", 16, variants=[
                      ("fused loss off", ["--fused-loss", "off"])], **short),
                  case("gpt2", "train", "fp8", 16, **short),
                  case("gpt2", "train", "amp_fp16", 16, **short),
                  case("gpt2", "train", "tf32", 16, **short),
                  case("resnet50", "infer", "amp_bf16", 1024, **short),
                  case("gpt2", "infer", "amp_bf16", 32, **short)]
    if plan == "vit_memory":
        # Pure bf16 ViT training peaks 2.4 MB above timm's (session 5): which part of ours
        # makes the difference, switched off one at a time.
        cases += [case("vit_b16", "train", "bf16", 160, warmup=5, windows=3, steps=10, variants=[
            ("graphs off", ["--graphs", "off"]),
            ("graphs off, fused adamw off", ["--graphs", "off", "--fused-adamw", "off"]),
            ("patch gemm off", ["--patch-gemm", "off"]),
            ("sdpa flash", ["--sdpa", "flash"]),
            ("sdpa efficient", ["--sdpa", "efficient"]),
            ("cudnn benchmark off", ["--cudnn-benchmark", "off"])])]
    if plan == "adam_memory":
        # FusedAdamW's moments in one buffer per dtype instead of one allocation per parameter
        # (session 5): training memory and speed of every model again.
        short = dict(warmup=5, windows=3, steps=10)
        cases += [case("vit_b16", "train", "bf16", 160, **short),
                  case("vit_b16", "train", "fp16", 160, **short),
                  case("vit_b16", "train", "amp_bf16", 160, **short),
                  case("resnet50", "train", "amp_bf16", 256, **short),
                  case("resnet50", "train", "bf16", 256, **short),
                  case("gpt2", "train", "bf16", 16, **short),
                  case("vit_b16", "train", "fp32", 160, warmup=3, windows=3, steps=5)]
    if plan == "batch_auto":
        # --batch auto with CUDA graphs, whose probes now capture too (session 4).
        cases += [case("resnet50", "train", "bf16", "auto", ours_only=True,
                       extra=["--max-batch", "16384"], **short),
                  case("vit_b16", "train", "amp_bf16", "auto", ours_only=True, **short),
                  case("gpt2", "infer", "bf16", "auto", ours_only=True, **short)]
    if plan == "patch_memory":
        # The patch GEMM's backward recomputing its rows (session 4): training memory per mode.
        cases += [case("vit_b16", "train", "fp32", 160, **slow),
                  case("vit_b16", "train", "bf16", 160, **short),
                  case("vit_b16", "train", "fp16", 160, **short),
                  case("vit_b16", "train", "amp_bf16", 160, variants=[
                      ("patch gemm off", ["--patch-gemm", "off"])]),
                  case("vit_b16", "infer", "bf16", 1024)]
    if plan == "fp8":
        # fp8 with the quantization kernel (session 4): against the reference's AMP bf16.
        cases += [case("vit_b16", "train", "fp8", 160, **short),
                  case("vit_b16", "train", "amp_bf16", 160, **short),
                  case("vit_b16", "infer", "fp8", 1024, **short),
                  case("gpt2", "train", "fp8", 16, **short),
                  case("gpt2", "infer", "fp8", 32, **short)]
    if plan == "pending":
        # What changed since the H100 calls (session 3, no device time): the inference memory
        # fixes (GPT-2, ResNet-50), the attention backends on ViT inference, and the cases the
        # call-3 deadline cut.
        cases += [case("vit_b16", "infer", "bf16", 1024, variants=[
                      ("sdpa cudnn", ["--sdpa", "cudnn"]),
                      ("sdpa flash", ["--sdpa", "flash"]),
                      ("both epilogues, sdpa cudnn",
                       ["--gelu-epilogue", "on", "--sdpa", "cudnn"])]),
                  case("gpt2", "infer", "bf16", 32),
                  case("resnet50", "infer", "bf16", 1024)]
        for m in ("bf16", "fp8", "amp_fp16"):
            cases.append(case("gpt2", "train", m, 16, **short))
        cases.append(case("resnet50", "infer", "amp_bf16", 1024, **short))
        cases.append(case("gpt2", "infer", "amp_bf16", 32, **short))
    if plan in ("others", "all"):
        # The ViT key cases again with the final defaults, then ResNet-50 and GPT-2: the AMP
        # bf16 cases (with torch.compile) first, the batch search, then the other modes.
        if plan == "others":
            cases += [case("vit_b16", "infer", "bf16", 1024, variants=[
                          ("gelu epilogue", ["--gelu-epilogue", "on"]),
                          ("residual epilogue off", ["--residual-epilogue", "off"])]),
                      case("vit_b16", "train", "amp_bf16", 160)]
        cases += [case("resnet50", "train", "amp_bf16", 256, compiled=True),
                  case("gpt2", "train", "amp_bf16", 16, compiled=True),
                  case("resnet50", "infer", "bf16", 1024),
                  case("gpt2", "infer", "bf16", 32,
                       variants=[("residual epilogue off", ["--residual-epilogue", "off"])]),
                  case("resnet50", "train", "bf16", "auto", ours_only=True,
                       extra=["--max-batch", "16384"], **short)]
        for m in ("amp_fp16", "bf16", "tf32"):
            cases.append(case("resnet50", "train", m, 256, **short))
        for m in ("bf16", "fp8", "amp_fp16"):
            cases.append(case("gpt2", "train", m, 16, **short))
        cases.append(case("resnet50", "infer", "amp_bf16", 1024, **short))
        cases.append(case("gpt2", "infer", "amp_bf16", 32, **short))
    return cases


def smoke_runs(binary, log, models, stop_at):
    """Ours only, every model x task x mode briefly: does each one run on this GPU?"""
    rows = []
    batches = {"vit_b16": 8, "resnet50": 8, "gpt2": 2}
    for model, batch in ((m, batches[m]) for m in models):
        for task in ("train", "infer"):
            for mode in ALL_MODES:
                if stop_at and time.time() > stop_at:
                    print(f"deadline: smoke stops before {model} {task} {mode}", flush=True)
                    return rows
                c = case(model, task, mode, batch, warmup=1, windows=1, steps=2)
                r = run_ours(binary, c, ["--quiet"], log)
                rows.append((c, r))
                status = r.get("problem") or f'{r["samples_per_second"]:.0f} samples/s'
                print(f"smoke {model:9s} {task:5s} {mode:9s} rc={r['exit_code']}: {status}",
                      flush=True)
    # --batch auto with its out-of-memory recovery, on the real allocator.
    c = case("resnet50", "train", "bf16", "auto", warmup=2, windows=1, steps=2)
    r = run_ours(binary, c, ["--max-batch", "16384", "--quiet"], log)
    print(f"smoke batch auto resnet50 train bf16: batch={r.get('batch')} probes={r['probes']} "
          f"rc={r['exit_code']} {r.get('problem', '')}", flush=True)
    rows.append((c, r))
    return rows


def diagnose(binary, c, ref_c, extra, log, folder):
    """Traces and allocator histories of ours (as run, and with each variant's arguments in
    c["diagnose"]) and of the eager reference, compared kernel by kernel and at the memory
    peak (bench/analysis/). Untimed: recording slows the steps a little."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "analysis"))
    import memory_peak
    import trace_compare
    os.makedirs(folder, exist_ok=True)
    name = f'{c["model"]}_{c["task"]}_{c["mode"]}_b{c["batch"]}'
    ref = os.path.join(folder, name + "_reference")
    try:
        ref_result = run_python(ref_c, compiled=False, diagnose=ref)
    except Exception as e:
        print(f"diagnose {name}: the reference failed: {e!r}"[:300], flush=True)
        torch.cuda.memory._record_memory_history(enabled=None)
        torch.cuda.empty_cache()
        return
    for label, args in [("ours", [])] + list(c["diagnose"]):
        prefix = os.path.join(folder, name + "_" + label.replace(" ", "_"))
        r = run_ours(binary, c, extra + args + ["--quiet", "--trace", prefix + ".trace.json",
                                                "--memory-snapshot", prefix + ".pickle"], log)
        print(f"diagnose {name}, {label}: {fmt_rate(r)} samples/s while recording; peak "
              f"allocated {r.get('peak_allocated_bytes')} bytes (eager "
              f"{ref_result.get('peak_allocated_bytes')}) "
              f"{r.get('problem', '') or r.get('diagnostics_problem', '')}", flush=True)
        if r.get("trace_file"):
            for line in trace_compare.compare(prefix + ".trace.json", ref + ".trace.json",
                                              labels=(label, "eager")):
                print(line, flush=True)
        if r.get("memory_snapshot_file"):
            for line in memory_peak.compare(
                    prefix + ".pickle", ref + ".pickle", labels=(label, "eager"),
                    from_us=(None, ref_result.get("timing_start_unix_us"))):
                print(line, flush=True)


def fmt_rate(r):
    if r is None:
        return "-"
    if "samples_per_second" not in r:
        return "n/a"
    return f'{r["samples_per_second"]:.0f}'


def fmt_gib(r):
    if r is None or r.get("peak_allocated_bytes") is None:
        return "-"
    return f'{r["peak_allocated_bytes"] / 2**30:.1f}'


def ratio(a, b):
    if not a or not b or "samples_per_second" not in a or "samples_per_second" not in b:
        return "-"
    return f'{a["samples_per_second"] / b["samples_per_second"]:.2f}x'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the gpuscope-torch program")
    parser.add_argument("--plan", default="key",
                        help="smoke | key | vit_train | vit_infer | vit | others | pending | kernels | fp8 | patch_memory | batch_auto | gaps | rest | vit_memory | adam_memory | all")
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile runs")
    parser.add_argument("--ours-extra", default="", help="extra gpuscope-torch arguments")
    parser.add_argument("--smoke-models", default="resnet50,gpt2,vit_b16",
                        help="models the smoke plan runs through every mode")
    parser.add_argument("--profile", action="store_true",
                        help="first print the top CUDA kernels of the reference's key cases")
    parser.add_argument("--diagnose-dir", default="",
                        help="where the gaps plan's traces and allocator histories go "
                             "(default OUT/diagnose)")
    parser.add_argument("--deadline", type=float, default=0,
                        help="seconds after which no new case starts (0: none)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "torch_vs_timm.log"), "a")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, "
          f"plan {args.plan}", flush=True)

    results = {"plan": args.plan, "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name(), "cases": []}
    begin = time.time()
    if args.profile:
        for c in (case("vit_b16", "train", "amp_bf16", 160, warmup=5),
                  case("vit_b16", "infer", "bf16", 1024, warmup=3)):
            profile_python(c)
    extra = args.ours_extra.split()
    rows = []
    for c in plan_cases(args.plan):
        if args.deadline and time.time() - begin > args.deadline:
            print(f'deadline: skipping {c["model"]} {c["task"]} {c["mode"]}', flush=True)
            continue
        ours = run_ours(args.bin, c, extra + c.get("extra", []) + ["--quiet"], log)
        label = f'{c["model"]} {c["task"]} {c["mode"]} b{c["batch"]}'
        print(f"{label}: ours {fmt_rate(ours)} {ours.get('problem', '')}", flush=True)
        if c.get("ours_only"):
            print(f"{label}: batch {ours.get('batch')} after probes {ours.get('probes')}",
                  flush=True)
            results["cases"].append({"case": c, "ours": ours})
            rows.append((f'{label} -> {ours.get("batch")}', ours, None, None))
            continue
        variant_rows = []
        for name, variant_args in c["variants"]:
            r = run_ours(args.bin, c, extra + variant_args + ["--quiet"], log)
            agree = ""
            if r.get("output_mean_abs") and ours.get("output_mean_abs"):
                # Same seed, same inputs: a fused path must give the same logits.
                rel = abs(r["output_mean_abs"] / ours["output_mean_abs"] - 1)
                agree = f"(mean |logit| differs by {rel:.1e})"
            print(f"{label}: ours, {name}: {fmt_rate(r)} {agree} {r.get('problem', '')}",
                  flush=True)
            variant_rows.append((name, r))
        ref_c = dict(c, mode="amp_bf16" if c["mode"] == "fp8" else c["mode"])
        try:
            eager = run_python(ref_c, compiled=False)
        except Exception as e:  # an OOM or unsupported mode is a row, not the end
            eager = {"problem": repr(e)[:200]}
            torch.cuda.empty_cache()
        print(f"{label}: eager {fmt_rate(eager)} {eager.get('problem', '')}", flush=True)
        compiled = None
        if c["compiled"] and not args.no_compile:
            try:
                compiled = run_python(ref_c, compiled=True)
            except Exception as e:
                compiled = {"problem": repr(e)[:200]}
                torch.cuda.empty_cache()
            print(f"{label}: compiled {fmt_rate(compiled)} {compiled.get('problem', '')}",
                  flush=True)
        if c.get("diagnose") is not None:
            diagnose(args.bin, c, ref_c, extra, log,
                     args.diagnose_dir or os.path.join(args.out, "diagnose"))
        results["cases"].append({"case": c, "ours": ours, "eager": eager, "compiled": compiled,
                                 "variants": {n: r for n, r in variant_rows}})
        rows.append((label, ours, eager, compiled))
        for name, r in variant_rows:
            rows.append((f"  + {name}", r, eager, compiled))
        with open(os.path.join(args.out, "torch_vs_timm.json"), "w") as f:
            json.dump(results, f, indent=1)

    if args.plan == "smoke" and not (args.deadline and time.time() - begin > args.deadline):
        models = args.smoke_models.split(",")
        results["smoke"] = [{"case": c, "ours": r} for c, r in smoke_runs(
            args.bin, log, models, begin + args.deadline if args.deadline else 0)]
        with open(os.path.join(args.out, "torch_vs_timm.json"), "w") as f:
            json.dump(results, f, indent=1)

    header = (f'{"case":34s} {"ours":>7s} {"eager":>7s} {"ratio":>6s} {"compile":>7s} '
              f'{"ratio":>6s} {"GiB ours":>8s} {"GiB eager":>9s}')
    print("\n" + header)
    print("-" * len(header))
    for label, ours, eager, compiled in rows:
        print(f"{label:34s} {fmt_rate(ours):>7s} {fmt_rate(eager):>7s} {ratio(ours, eager):>6s} "
              f"{fmt_rate(compiled):>7s} {ratio(ours, compiled):>6s} {fmt_gib(ours):>8s} "
              f"{fmt_gib(eager):>9s}")
    print("(samples/s, median of windows; GiB: peak allocated after warm-up; fp8 rows compare "
          "with the reference's AMP bf16)")


if __name__ == "__main__":
    main()
