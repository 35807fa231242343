// gpuscope-torch's own LayerNorm kernel for fp16/bf16 rows of up to 1024 values: one warp per
// row, the row held in registers, fp32 statistics. ATen's vectorized_layer_norm_kernel moved
// about 1.25 TB/s on ViT-B/16's [197 x 1024, 768] bf16 activations on the H100 (profiled,
// bench/RESULTS.md); this one reads and writes each value once. No LibTorch here: layer_norm.cc
// checks tensors and calls it on the current stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuscope::workloads {

enum class HalfKind { fp16, bf16 };

// The widest row the kernel holds in registers (32 lanes x 4 vectors x 8 values).
inline constexpr int64_t kLayerNormMaxWidth = 1024;

// Whether rows of this width fit: a multiple of 8 (16-byte vectors) up to kLayerNormMaxWidth.
constexpr bool layer_norm_width_fits(int64_t width) {
  return width > 0 && width % 8 == 0 && width <= kLayerNormMaxWidth;
}

// y[r] = (x[r] - mean) / sqrt(var + eps) * weight + bias for each of `rows` contiguous rows.
// Pointers 16-byte aligned, width as layer_norm_width_fits; returns the launch's error.
cudaError_t launch_layer_norm(HalfKind kind, const void* x, const void* weight, const void* bias,
                              void* y, int64_t rows, int64_t width, float eps, cudaStream_t stream);

}  // namespace gpuscope::workloads
