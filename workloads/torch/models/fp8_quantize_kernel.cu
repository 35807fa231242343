#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "models/fp8_quantize_kernel.h"

namespace gpuscope::workloads {
namespace {

// 32 x 32 tiles, 32 x 8 threads, each thread 4 rows of the tile: reads coalesced along a row,
// the transposed writes coalesced along a column through shared memory.
constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

__device__ float load(const float* p, int64_t i) {
  return p[i];
}
__device__ float load(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ float load(const __half* p, int64_t i) {
  return __half2float(p[i]);
}

template <__nv_fp8_interpretation_t kFormat>
__device__ __nv_fp8_storage_t to_fp8(float v) {
  return __nv_cvt_float_to_fp8(v, __NV_SATFINITE, kFormat);
}

__device__ float scale_from(const float* amax, float format_max) {
  return format_max / fmaxf(*amax, 1e-12f);
}

template <typename T, __nv_fp8_interpretation_t kFormat>
__global__ void quantize_tiles(const T* __restrict__ source, int64_t rows, int64_t cols,
                               int64_t padded_rows, const float* __restrict__ amax,
                               float format_max, __nv_fp8_storage_t* __restrict__ out,
                               __nv_fp8_storage_t* __restrict__ out_t, float* inv_scale) {
  __shared__ __nv_fp8_storage_t tile[kTile][kTile + 4];
  const float scale = scale_from(amax, format_max);
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    *inv_scale = 1.f / scale;
  }
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col = col0 + threadIdx.x;
#pragma unroll
  for (int k = 0; k < kTile; k += kRowsPerPass) {
    const int64_t row = row0 + threadIdx.y + k;
    __nv_fp8_storage_t q = 0;  // +0 in both formats: the padding rows
    if (row < rows && col < cols) q = to_fp8<kFormat>(load(source, row * cols + col) * scale);
    if (row < padded_rows && col < cols) {
      if (out != nullptr) out[row * cols + col] = q;
      tile[threadIdx.y + k][threadIdx.x] = q;
    }
  }
  if (out_t == nullptr) return;
  __syncthreads();
  // out_t[c][r] = q[r][c]: threadIdx.x walks rows, so a warp writes 32 consecutive bytes.
  const int64_t t_row = row0 + threadIdx.x;
#pragma unroll
  for (int k = 0; k < kTile; k += kRowsPerPass) {
    const int64_t t_col = col0 + threadIdx.y + k;
    if (t_row < padded_rows && t_col < cols) {
      out_t[t_col * padded_rows + t_row] = tile[threadIdx.x][threadIdx.y + k];
    }
  }
}

template <typename T>
cudaError_t launch_typed(const Fp8QuantizeArgs& a, cudaStream_t stream) {
  const dim3 threads(kTile, kRowsPerPass);
  const dim3 blocks(static_cast<unsigned>((a.cols + kTile - 1) / kTile),
                    static_cast<unsigned>((a.padded_rows + kTile - 1) / kTile));
  auto* out = static_cast<__nv_fp8_storage_t*>(a.out);
  auto* out_t = static_cast<__nv_fp8_storage_t*>(a.out_transposed);
  const T* source = static_cast<const T*>(a.source);
  if (a.format == Fp8Format::e4m3) {
    quantize_tiles<T, __NV_E4M3><<<blocks, threads, 0, stream>>>(
        source, a.rows, a.cols, a.padded_rows, a.amax, a.format_max, out, out_t, a.inv_scale);
  } else {
    quantize_tiles<T, __NV_E5M2><<<blocks, threads, 0, stream>>>(
        source, a.rows, a.cols, a.padded_rows, a.amax, a.format_max, out, out_t, a.inv_scale);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fp8_quantize(const Fp8QuantizeArgs& a, cudaStream_t stream) {
  if (a.rows < 0 || a.cols <= 0 || a.padded_rows < a.rows || a.padded_rows <= 0 ||
      a.source == nullptr || a.amax == nullptr || a.inv_scale == nullptr ||
      (a.out == nullptr && a.out_transposed == nullptr)) {
    return cudaErrorInvalidValue;
  }
  switch (a.source_kind) {
    case Fp8SourceKind::fp32:
      return launch_typed<float>(a, stream);
    case Fp8SourceKind::bf16:
      return launch_typed<__nv_bfloat16>(a, stream);
    case Fp8SourceKind::fp16:
      return launch_typed<__half>(a, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuscope::workloads
