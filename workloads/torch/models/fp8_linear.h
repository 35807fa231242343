// y = x W^T + b with both GEMMs of the forward and both of the backward in float8 on
// at::_scaled_mm: activations and weights in e4m3, output gradients in e5m2, each tensor with
// its own dynamic scale (amax / format max, computed on the device every call), products
// accumulated in fp32 and written in the caller's dtype. The bias is added in the GEMM's epilogue.
// On CUDA each operand is scaled, cast and written in both layouts the GEMMs take in one pass of
// our own kernel (fp8_quantize_kernel.h); on the CPU, by ATen's ops.
// Used by the `fp8` precision mode for the transformer blocks' Linear layers.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

namespace gpuscope::workloads {

// Whether a Linear layer of these sizes can run in fp8 (_scaled_mm needs multiples of 16).
bool fp8_linear_fits(int64_t in_features, int64_t out_features);

// x: [..., in] (fp32, bf16 or fp16), weight: [out, in], bias: [out] or undefined.
// Returns [..., out] in `out_dtype`. Differentiable in x, weight and bias.
at::Tensor fp8_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                      at::ScalarType out_dtype);

// The same with a weight already quantized (inference: quantized once, reused every call).
struct Fp8Weight {
  at::Tensor data;       // [out, in], e4m3
  at::Tensor inv_scale;  // 0-dim float32: data * inv_scale ~ weight
};
Fp8Weight quantize_fp8_weight(const at::Tensor& weight);
at::Tensor fp8_linear_inference(const at::Tensor& x, const Fp8Weight& weight,
                                const at::Tensor& bias, at::ScalarType out_dtype);

}  // namespace gpuscope::workloads
