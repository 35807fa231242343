// out = x W^T + b + residual as one cuBLASLt GEMM: the bias added in the epilogue and the
// residual read as the GEMM's C matrix (beta = 1), so the separate residual add (read two
// tensors, write one) disappears. Used by inference in pure fp16/bf16 (--residual-epilogue);
// everything else takes the unfused path. cuBLASLt is called directly here because ATen's addmm
// takes either a bias vector or a C matrix, not both; the handle and workspace are LibTorch's
// own for the current stream, so the call is ordered with LibTorch's work and can be captured in
// a CUDA graph.
#pragma once

#include <ATen/ATen.h>

namespace gpuscope::workloads {

// True when the fused GEMM can take these tensors: CUDA, one 16-bit dtype, x [M, K], weight
// [N, K], bias [N], residual [M, N], all contiguous and 256-byte aligned, K and N multiples of 8.
bool residual_linear_fits(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias,
                          const at::Tensor& residual2d);

// REQUIRES: residual_linear_fits(...). Returns a new [M, N] tensor; not differentiable.
at::Tensor residual_linear(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias,
                           const at::Tensor& residual2d);

}  // namespace gpuscope::workloads
