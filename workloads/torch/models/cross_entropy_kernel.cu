#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "models/cross_entropy_kernel.h"

namespace gpuscope::workloads {
namespace {

constexpr int kThreads = 512;
constexpr int kWarp = 32;

__device__ float to_float(float v) {
  return v;
}
__device__ float to_float(__half v) {
  return __half2float(v);
}
__device__ float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// A running softmax denominator: sum of exp(x - max) over the values seen, and their max.
struct MaxSum {
  float max;
  float sum;
};

__device__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return {m, 0.f};  // nothing but -inf yet
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

__device__ MaxSum block_max_sum(MaxSum v) {
  __shared__ MaxSum partial[kThreads / kWarp];
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v = combine(v, {__shfl_xor_sync(0xffffffffu, v.max, offset),
                    __shfl_xor_sync(0xffffffffu, v.sum, offset)});
  }
  const int warp = threadIdx.x / kWarp;
  if (threadIdx.x % kWarp == 0) partial[warp] = v;
  __syncthreads();
  MaxSum total = partial[0];
  for (int w = 1; w < kThreads / kWarp; ++w) total = combine(total, partial[w]);
  return total;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_rows(T* __restrict__ logits, const int64_t* __restrict__ target,
                       float* __restrict__ loss, int64_t vocab, int64_t ignore_index) {
  T* x = logits + static_cast<int64_t>(blockIdx.x) * vocab;
  const int64_t t = target[blockIdx.x];
  const bool ignored = t == ignore_index;

  // NaN propagates: a NaN logit makes the sum, the loss and the whole row's gradient NaN, which
  // is what the loss scaler and the convergence guard look for.
  MaxSum mine{-INFINITY, 0.f};
  for (int64_t j = threadIdx.x; j < vocab; j += kThreads) {
    const float v = to_float(x[j]);
    if (v == -INFINITY) continue;  // adds nothing (and exp(-inf - -inf) would be NaN)
    if (v > mine.max) {
      mine.sum = mine.sum * expf(mine.max - v) + 1.f;
      mine.max = v;
    } else {
      mine.sum += expf(v - mine.max);
    }
  }
  const MaxSum row = block_max_sum(mine);
  const float lse = row.max + logf(row.sum);
  if (threadIdx.x == 0) loss[blockIdx.x] = ignored ? 0.f : lse - to_float(x[t]);
  __syncthreads();  // x[t] is read before any thread overwrites it

  for (int64_t j = threadIdx.x; j < vocab; j += kThreads) {
    const float p = expf(to_float(x[j]) - lse);
    x[j] = from_float<T>(ignored ? 0.f : p - (j == t ? 1.f : 0.f));
  }
}

template <typename T>
cudaError_t launch(void* logits, const int64_t* target, float* loss, int64_t rows, int64_t vocab,
                   int64_t ignore_index, cudaStream_t stream) {
  cross_entropy_rows<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<T*>(logits), target, loss, vocab, ignore_index);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_cross_entropy(LogitKind kind, void* logits, const int64_t* target, float* loss,
                                 int64_t rows, int64_t vocab, int64_t ignore_index,
                                 cudaStream_t stream) {
  if (rows <= 0 || vocab <= 0 || rows > 0x7fffffff) return cudaErrorInvalidValue;
  switch (kind) {
    case LogitKind::fp32:
      return launch<float>(logits, target, loss, rows, vocab, ignore_index, stream);
    case LogitKind::fp16:
      return launch<__half>(logits, target, loss, rows, vocab, ignore_index, stream);
    case LogitKind::bf16:
      return launch<__nv_bfloat16>(logits, target, loss, rows, vocab, ignore_index, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuscope::workloads
