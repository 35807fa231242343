// Per-tensor fp8 quantization in one pass, for fp8_linear.cc: scale from a max-abs already on the
// device, saturating cast, and, in the same pass, the transposed copy _scaled_mm's other operand
// layouts need. On ViT-B/16's training shapes the ATen route (scale, clamp and cast as three
// kernels, then a transpose of the fp8 result) cost 7 ms per block against 1.5 ms of fp8 GEMMs
// (bench/analysis/fp8_linear_profile.py on the H100). No LibTorch here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuscope::workloads {

enum class Fp8SourceKind { fp32, bf16, fp16 };
enum class Fp8Format { e4m3, e5m2 };

struct Fp8QuantizeArgs {
  Fp8SourceKind source_kind = Fp8SourceKind::fp32;
  Fp8Format format = Fp8Format::e4m3;
  const void* source = nullptr;  // [rows, cols], row-major, contiguous
  int64_t rows = 0;
  int64_t cols = 0;                // a multiple of 16
  int64_t padded_rows = 0;         // >= rows: the outputs' row count, zero-filled past `rows`
  const float* amax = nullptr;     // device: max |source|
  float format_max = 448.f;        // the format's largest finite value
  void* out = nullptr;             // [padded_rows, cols] fp8, or nullptr
  void* out_transposed = nullptr;  // [cols, padded_rows] fp8, or nullptr
  float* inv_scale = nullptr;      // device: amax / format_max (clamped as the scale), dequantizes
};

// q = saturate(source * format_max / max(amax, 1e-12)); NaN stays NaN. Returns the launch error.
cudaError_t launch_fp8_quantize(const Fp8QuantizeArgs& args, cudaStream_t stream);

}  // namespace gpuscope::workloads
