#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "models/layer_norm_kernel.h"

namespace gpuscope::workloads {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 4;  // one warp per row
constexpr int kVector = 8;        // halves per 16-byte load

template <typename T>
struct Half2;
template <>
struct Half2<__half> {
  using type = __half2;
  static __device__ float2 to_float2(type v) { return __half22float2(v); }
  static __device__ type from_float2(float2 v) { return __float22half2_rn(v); }
};
template <>
struct Half2<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static __device__ float2 to_float2(type v) { return __bfloat1622float2(v); }
  static __device__ type from_float2(float2 v) { return __float22bfloat162_rn(v); }
};

template <typename T>
__device__ void unpack(uint4 packed, float (&out)[kVector]) {
  using H2 = Half2<T>;
  const auto* pairs = reinterpret_cast<const typename H2::type*>(&packed);
#pragma unroll
  for (int i = 0; i < kVector / 2; ++i) {
    const float2 f = H2::to_float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

template <typename T>
__device__ uint4 pack(const float (&in)[kVector]) {
  using H2 = Half2<T>;
  uint4 packed;
  auto* pairs = reinterpret_cast<typename H2::type*>(&packed);
#pragma unroll
  for (int i = 0; i < kVector / 2; ++i)
    pairs[i] = H2::from_float2(make_float2(in[2 * i], in[2 * i + 1]));
  return packed;
}

__device__ float warp_sum(float v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Lane l holds the row's vectors l, l + 32, ...: kVectorsPerLane of them at most. Two passes over
// the registers (mean, then squared deviations) as ATen's fp32 statistics, not E[x^2] - E[x]^2.
template <typename T, int kVectorsPerLane>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock)
    layer_norm_rows(const uint4* __restrict__ x, const uint4* __restrict__ weight,
                    const uint4* __restrict__ bias, uint4* __restrict__ y, int64_t rows,
                    int vectors, float inv_width, float eps) {
  const int lane = threadIdx.x % kWarp;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  if (row >= rows) return;
  const uint4* in = x + row * vectors;
  uint4* out = y + row * vectors;

  float v[kVectorsPerLane][kVector];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kVectorsPerLane; ++k) {
    const int i = lane + k * kWarp;
    if (i < vectors) {
      unpack<T>(__ldcs(in + i), v[k]);
#pragma unroll
      for (int e = 0; e < kVector; ++e) sum += v[k][e];
    }
  }
  const float mean = warp_sum(sum) * inv_width;
  float squares = 0.f;
#pragma unroll
  for (int k = 0; k < kVectorsPerLane; ++k) {
    if (lane + k * kWarp < vectors) {
#pragma unroll
      for (int e = 0; e < kVector; ++e) {
        const float d = v[k][e] - mean;
        squares += d * d;
      }
    }
  }
  const float rstd = rsqrtf(warp_sum(squares) * inv_width + eps);
#pragma unroll
  for (int k = 0; k < kVectorsPerLane; ++k) {
    const int i = lane + k * kWarp;
    if (i < vectors) {
      float w[kVector], b[kVector], r[kVector];
      unpack<T>(weight[i], w);
      unpack<T>(bias[i], b);
#pragma unroll
      for (int e = 0; e < kVector; ++e) r[e] = (v[k][e] - mean) * rstd * w[e] + b[e];
      __stcs(out + i, pack<T>(r));
    }
  }
}

template <typename T>
cudaError_t launch(const void* x, const void* weight, const void* bias, void* y, int64_t rows,
                   int64_t width, float eps, cudaStream_t stream) {
  const int vectors = static_cast<int>(width / kVector);
  const auto blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  const float inv_width = 1.f / static_cast<float>(width);
  const auto* in = static_cast<const uint4*>(x);
  const auto* w = static_cast<const uint4*>(weight);
  const auto* b = static_cast<const uint4*>(bias);
  auto* out = static_cast<uint4*>(y);
  const dim3 threads(kWarp * kRowsPerBlock);
  switch ((vectors + kWarp - 1) / kWarp) {
    case 1:
      layer_norm_rows<T, 1>
          <<<blocks, threads, 0, stream>>>(in, w, b, out, rows, vectors, inv_width, eps);
      break;
    case 2:
      layer_norm_rows<T, 2>
          <<<blocks, threads, 0, stream>>>(in, w, b, out, rows, vectors, inv_width, eps);
      break;
    case 3:
      layer_norm_rows<T, 3>
          <<<blocks, threads, 0, stream>>>(in, w, b, out, rows, vectors, inv_width, eps);
      break;
    case 4:
      layer_norm_rows<T, 4>
          <<<blocks, threads, 0, stream>>>(in, w, b, out, rows, vectors, inv_width, eps);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_layer_norm(HalfKind kind, const void* x, const void* weight, const void* bias,
                              void* y, int64_t rows, int64_t width, float eps,
                              cudaStream_t stream) {
  if (!layer_norm_width_fits(width) || rows <= 0) return cudaErrorInvalidValue;
  return kind == HalfKind::bf16
             ? launch<__nv_bfloat16>(x, weight, bias, y, rows, width, eps, stream)
             : launch<__half>(x, weight, bias, y, rows, width, eps, stream);
}

}  // namespace gpuscope::workloads
