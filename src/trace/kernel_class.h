// What a GPU kernel does, read from its (mangled or demangled) name: the classes a per-step
// breakdown and the diagnose rules need. Names are the only evidence CUPTI gives without
// counters, so this is a heuristic over the naming conventions of cuBLAS/cuBLASLt (nvjet, xmma,
// cutlass, sm90_*), cuDNN, ATen, Triton and NCCL, tested on names recorded on the H100.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::trace::detail {

enum class KernelKind {
  gemm,           // matrix multiply (cuBLAS/cuBLASLt/CUTLASS/Triton matmul)
  convolution,    // cuDNN / implicit-GEMM convolutions (forward, dgrad, wgrad)
  attention,      // fused attention (flash, memory-efficient, cuDNN SDPA)
  elementwise,    // pointwise ops (ATen's elementwise kernels, fused Triton pointwise)
  reduction,      // reductions, norms, softmax
  optimizer,      // fused/multi-tensor optimizer steps (multi_tensor_apply, fused adam)
  communication,  // NCCL collectives
  copy,           // copy-like kernels (cat, index, gather/scatter, transpose)
  other,
};
const char* kernel_kind_name(KernelKind kind);

// The arithmetic a matrix kernel runs in, where its name says so.
enum class MathPrecision { unknown, fp64, fp32, tf32, fp16, bf16, fp8, int8 };
const char* math_precision_name(MathPrecision precision);

struct KernelClass {
  KernelKind kind = KernelKind::other;
  MathPrecision precision = MathPrecision::unknown;
  // True when the name shows tensor-core instructions (HMMA/WGMMA/IMMA, tensorop, xmma, nvjet
  // bf16/fp16/tf32 ...); false for SIMT kernels such as sgemm or fp32 CUDA-core convolutions.
  bool tensor_cores = false;
  // Communication kernels: the collective they run (collective_of); empty for the rest.
  std::string_view collective;
};

KernelClass classify_kernel(std::string_view name);

// The collective a communication kernel runs, from its NCCL name
// ("ncclDevKernel_AllGather_RING_LL", "ncclKernel_SendRecv"): "all_reduce", "all_gather",
// "reduce_scatter", "broadcast", "reduce", "send_recv", else "other".
const char* collective_of(std::string_view name);

}  // namespace gpuscope::trace::detail
