#!/usr/bin/env python3
"""Where ViT-B/16 bf16 inference at batch 1024 spends its time, on the GPU machine.

Profiles timm's vit_base_patch16_224 (eager, pure bf16, inference mode) with torch.profiler and
sums kernel time by kind (GEMM, attention, LayerNorm, GELU, adds, copies), then times the pieces
gpuscope-torch could do differently: each SDPA backend on the model's attention shape, the four
Linear shapes (achieved TFLOP/s), and the memory-bound passes (LayerNorm, GELU, residual add).
Reads the GPU, changes nothing. Prints a report and writes vit_infer_profile.json under --out.
Written in session 3, which had no device time: not yet run.
"""
import argparse
import json
import os
import re
from collections import defaultdict

import torch
import torch.nn.functional as F

KINDS = [
    ("attention", re.compile(r"flash|fmha|attention|sdpa|cudnn.*(mha|attn)", re.I)),
    ("gemm", re.compile(r"gemm|sm90_xmma|cutlass|nvjet|matmul|cublas", re.I)),
    ("layer_norm", re.compile(r"layer_norm|layernorm", re.I)),
    ("gelu", re.compile(r"gelu", re.I)),
    ("conv", re.compile(r"conv|implicit", re.I)),
    ("add/elementwise", re.compile(r"elementwise|vectorized|add|mul", re.I)),
    ("copy/cat", re.compile(r"copy|cat|transpose|permute", re.I)),
]


def kind_of(name):
    for kind, pattern in KINDS:
        if pattern.search(name):
            return kind
    return "other"


def time_ms(fn, iters=20, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def profile_timm(batch, steps):
    import timm

    model = timm.create_model("vit_base_patch16_224").cuda().to(torch.bfloat16).eval()
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        step_ms = time_ms(lambda: model(x), iters=10, warmup=5)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(steps):
                model(x)
            torch.cuda.synchronize()
    by_kind = defaultdict(float)
    by_kernel = defaultdict(float)
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
        by_kind[kind_of(e.name)] += us / 1000 / steps
        by_kernel[e.name[:110]] += us / 1000 / steps
    del model
    torch.cuda.empty_cache()
    return step_ms, dict(by_kind), sorted(by_kernel.items(), key=lambda kv: -kv[1])[:25]


def attention_backends(batch):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    qkv = torch.randn(batch, 197, 3, 12, 64, device="cuda", dtype=torch.bfloat16)
    q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
    result = {}
    for name, backend in [("flash", SDPBackend.FLASH_ATTENTION),
                          ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
        try:
            with sdpa_kernel([backend]):
                result[name] = time_ms(lambda: F.scaled_dot_product_attention(q, k, v)) * 12
        except Exception as error:  # a backend that does not take this shape
            result[name] = f"unavailable: {str(error)[:120]}"
    return result


def linears(batch):
    m = batch * 197
    result = {}
    for name, (k, n) in {"qkv": (768, 2304), "proj": (768, 768), "fc1": (768, 3072),
                         "fc2": (3072, 768)}.items():
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
        b = torch.zeros(n, device="cuda", dtype=torch.bfloat16)
        ms = time_ms(lambda: F.linear(x, w, b))
        result[name] = {"ms_per_layer": ms, "ms_all_layers": ms * 12,
                        "tflops": 2 * m * n * k / ms / 1e9}
        del x, w, b
    return result


def memory_bound(batch):
    """The memory-bound passes of one block, timed alone; x per_model = 12 blocks' worth."""
    m = batch * 197
    x = torch.randn(m, 768, device="cuda", dtype=torch.bfloat16)
    r = torch.randn(m, 768, device="cuda", dtype=torch.bfloat16)
    h = torch.randn(m, 3072, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(768, device="cuda", dtype=torch.bfloat16)
    b = torch.zeros(768, device="cuda", dtype=torch.bfloat16)
    passes = {  # name: (function, bytes moved, passes per block)
        "layer_norm": (lambda: F.layer_norm(x, (768,), w, b, 1e-6), 2 * x.numel() * 2, 2),
        "gelu_exact_3072": (lambda: F.gelu(h), 2 * h.numel() * 2, 1),
        "residual_add": (lambda: x + r, 3 * x.numel() * 2, 2),
        "copy_768": (lambda: x.clone(), 2 * x.numel() * 2, 0),
    }
    result = {}
    for name, (fn, moved, per_block) in passes.items():
        ms = time_ms(fn)
        result[name] = {"ms_per_pass": ms, "ms_per_model": ms * per_block * 12,
                        "tb_per_s": moved / ms / 1e9}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    a = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    report = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "batch": a.batch}
    step_ms, by_kind, top = profile_timm(a.batch, a.steps)
    report.update(timm_step_ms=step_ms, timm_samples_per_s=a.batch / step_ms * 1000,
                  kernel_ms_by_kind=by_kind, top_kernels=top)
    report["attention_ms_all_layers"] = attention_backends(a.batch)
    report["linear"] = linears(a.batch)
    report["memory_bound"] = memory_bound(a.batch)
    print(json.dumps(report, indent=2))
    with open(os.path.join(a.out, "vit_infer_profile.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
