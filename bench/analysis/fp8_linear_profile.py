"""Where gpuscope-torch's fp8 Linear spends its time, op by op, against the AMP bf16 Linear.

gpuscope-torch's `fp8` mode (workloads/torch/models/fp8_linear.cc) runs each transformer-block
Linear on torch._scaled_mm with per-tensor dynamic scales. This script repeats exactly its ATen
calls in PyTorch (the same kernels LibTorch runs) on ViT-B/16's training shapes at batch 160
(M = 160 x 197 tokens) and times each part with CUDA events: the quantizations (amax, scale,
clamp, cast), the layout copies _scaled_mm needs, the three GEMMs, and the same Linear in AMP
bf16. Reads the GPU, changes nothing. Run on the GPU machine:

    python3 bench/analysis/fp8_linear_profile.py [--tokens 31520] [--out DIR]
"""
import argparse
import json
import os

import torch

E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def timed(fn, reps=30, warmup=5):
    """Median milliseconds of fn() over reps, after warmup."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


# fp8_linear.cc's quantize(), split into its passes.
def amax(t):
    return torch.linalg.vector_norm(t, float("inf")).float()


def scale_clamp_cast(t, a, fp8, fmax):
    scale = fmax / a.clamp_min(1e-12)
    s = t * scale
    s.clamp_(-fmax, fmax)
    return s.to(fp8), scale.reciprocal()


def quantize(t, fp8, fmax):
    return scale_clamp_cast(t, amax(t), fp8, fmax)


def column_major(t):
    return t.t().contiguous().t()


def profile_shape(m, k, n, x_dtype):
    dev = "cuda"
    x = torch.randn(m, k, device=dev, dtype=x_dtype)
    w = torch.randn(n, k, device=dev) * 0.02  # fp32 master weight, as AMP keeps it
    b = torch.zeros(n, device=dev)
    g = torch.randn(m, n, device=dev, dtype=torch.bfloat16)
    x8, x_inv = quantize(x, torch.float8_e4m3fn, E4M3_MAX)
    w8, w_inv = quantize(w, torch.float8_e4m3fn, E4M3_MAX)
    g8, g_inv = quantize(g, torch.float8_e5m2, E5M2_MAX)
    bias16 = b.to(torch.bfloat16)
    w8_cm, x8_cm, g8_t = column_major(w8), column_major(x8), g8.t().contiguous()
    parts = {
        "fwd: amax(x)": lambda: amax(x),
        "fwd: scale+clamp+cast(x)": lambda: scale_clamp_cast(x, x_inv, torch.float8_e4m3fn,
                                                              E4M3_MAX),
        "fwd: quantize(w)": lambda: quantize(w, torch.float8_e4m3fn, E4M3_MAX),
        "fwd: scaled_mm": lambda: torch._scaled_mm(x8, w8.t(), x_inv, w_inv, bias=bias16,
                                                   out_dtype=torch.bfloat16,
                                                   use_fast_accum=True),
        "bwd: quantize(grad)": lambda: quantize(g, torch.float8_e5m2, E5M2_MAX),
        "bwd: column-major w8": lambda: column_major(w8),
        "bwd: dgrad scaled_mm": lambda: torch._scaled_mm(g8, w8_cm, g_inv, w_inv,
                                                         out_dtype=torch.bfloat16),
        "bwd: transpose g8": lambda: g8.t().contiguous(),
        "bwd: column-major x8": lambda: column_major(x8),
        "bwd: wgrad scaled_mm": lambda: torch._scaled_mm(g8_t, x8_cm, g_inv, x_inv,
                                                         out_dtype=torch.float32),
        "bwd: bias grad": lambda: g.sum(0, dtype=torch.float32),
    }
    ms = {name: timed(fn) for name, fn in parts.items()}
    # The same Linear under AMP bf16: forward GEMM (with its weight cast), dgrad, wgrad.
    xb, wb = x.to(torch.bfloat16), w.to(torch.bfloat16)
    ref = {
        "bf16: cast w": lambda: w.to(torch.bfloat16),
        "bf16: fwd addmm": lambda: torch.addmm(bias16, xb, wb.t()),
        "bf16: dgrad mm": lambda: g @ wb,
        "bf16: wgrad mm": lambda: g.t() @ xb,
        "bf16: bias grad": lambda: g.sum(0, dtype=torch.float32),
    }
    if x_dtype == torch.float32:
        ref["bf16: cast x (autocast)"] = lambda: x.to(torch.bfloat16)
    ms_ref = {name: timed(fn) for name, fn in ref.items()}
    return ms, ms_ref


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=160 * 197)
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    a = parser.parse_args()
    # ViT-B/16 block Linears: (name, in, out, dtype of the input under AMP: LayerNorm's output is
    # fp32, attention's and GELU's are bf16).
    shapes = [("qkv", 768, 2304, torch.float32), ("proj", 768, 768, torch.bfloat16),
              ("fc1", 768, 3072, torch.float32), ("fc2", 3072, 768, torch.bfloat16)]
    report = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
              "tokens": a.tokens, "layers": {}}
    total_fp8 = total_bf16 = 0.0
    for name, k, n, dt in shapes:
        ms, ms_ref = profile_shape(a.tokens, k, n, dt)
        fp8_sum, bf16_sum = sum(ms.values()), sum(ms_ref.values())
        gemm = sum(v for key, v in ms.items() if "scaled_mm" in key)
        total_fp8 += fp8_sum
        total_bf16 += bf16_sum
        report["layers"][name] = {"fp8_ms": ms, "bf16_ms": ms_ref, "fp8_total_ms": fp8_sum,
                                  "fp8_gemm_ms": gemm, "bf16_total_ms": bf16_sum}
        print(f"{name} [{a.tokens}x{k}] -> {n} (input {str(dt).replace('torch.', '')}): "
              f"fp8 {fp8_sum:.3f} ms (GEMMs {gemm:.3f}), AMP bf16 {bf16_sum:.3f} ms")
        for key, v in ms.items():
            print(f"    {key:28s} {v:7.3f} ms")
        for key, v in ms_ref.items():
            print(f"    {key:28s} {v:7.3f} ms")
    report["per_block_fp8_ms"] = total_fp8
    report["per_block_bf16_ms"] = total_bf16
    print(f"per block: fp8 Linears {total_fp8:.2f} ms, AMP bf16 Linears {total_bf16:.2f} ms; "
          f"x12 blocks: {12 * total_fp8:.1f} vs {12 * total_bf16:.1f} ms per step")
    with open(os.path.join(a.out, "fp8_linear_profile.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
