#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

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
  // Nothing but -inf yet: the sums are 0, or NaN where a NaN was seen, which must survive.
  if (m == -INFINITY) return {m, a.sum + b.sum};
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

// Visits n values from `row` (sizeof(T)-aligned) as 16-byte vectors where the row is aligned to
// them (GPT-2's rows of 50257 are not: each starts at a different offset), scalars before and
// after. f(j, value) reads; with Write, f returns the value stored back at j. `first`, `stride`:
// the thread's start and step over the row's vectors.
template <bool Write, typename T, typename F>
__device__ void for_each_value(T* row, int64_t n, int64_t first, int64_t stride, F&& f) {
  constexpr int kPerVector = 16 / sizeof(T);
  const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(row) & 15);
  const int64_t to_alignment = ((16 - misaligned) & 15) / static_cast<int64_t>(sizeof(T));
  const int64_t head = to_alignment < n ? to_alignment : n;
  const int64_t vectors = (n - head) / kPerVector;
  const int64_t tail = head + vectors * kPerVector;
  auto scalar = [&](int64_t j) {
    if constexpr (Write) {
      row[j] = from_float<T>(f(j, to_float(row[j])));
    } else {
      f(j, to_float(row[j]));
    }
  };
  for (int64_t j = first; j < head; j += stride) scalar(j);
  auto* body = reinterpret_cast<uint4*>(row + head);
  for (int64_t k = first; k < vectors; k += stride) {
    uint4 packed = body[k];
    auto* values = reinterpret_cast<T*>(&packed);
#pragma unroll
    for (int e = 0; e < kPerVector; ++e) {
      const int64_t j = head + k * kPerVector + e;
      if constexpr (Write) {
        values[e] = from_float<T>(f(j, to_float(values[e])));
      } else {
        f(j, to_float(values[e]));
      }
    }
    if constexpr (Write) body[k] = packed;
  }
  for (int64_t j = tail + first; j < n; j += stride) scalar(j);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_rows(T* __restrict__ logits, const int64_t* __restrict__ target,
                       float* __restrict__ loss, int64_t vocab, int64_t ignore_index,
                       const float* __restrict__ grad_factor) {
  T* x = logits + static_cast<int64_t>(blockIdx.x) * vocab;
  const int64_t t = target[blockIdx.x];
  const bool ignored = t == ignore_index;

  // NaN propagates: a NaN logit makes the sum, the loss and the whole row's gradient NaN, which
  // is what the loss scaler and the convergence guard look for.
  MaxSum mine{-INFINITY, 0.f};
  for_each_value<false>(x, vocab, threadIdx.x, kThreads, [&](int64_t, float v) {
    if (v == -INFINITY) return;  // adds nothing (and exp(-inf - -inf) would be NaN)
    if (v > mine.max) {
      mine.sum = mine.sum * expf(mine.max - v) + 1.f;
      mine.max = v;
    } else {
      mine.sum += expf(v - mine.max);
    }
  });
  const MaxSum row = block_max_sum(mine);
  const float lse = row.max + logf(row.sum);
  if (threadIdx.x == 0) loss[blockIdx.x] = ignored ? 0.f : lse - to_float(x[t]);
  __syncthreads();  // x[t] is read before any thread overwrites it

  const float factor = ignored ? 0.f : *grad_factor;
  for_each_value<true>(x, vocab, threadIdx.x, kThreads, [&](int64_t j, float v) {
    return (expf(v - lse) - (j == t ? 1.f : 0.f)) * factor;
  });
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    scale_values(T* __restrict__ values, int64_t n, const float* __restrict__ factor) {
  const float f = *factor;
  if (f == 1.f) return;  // the usual case: the loss's gradient is 1
  for_each_value<true>(values, n, static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x,
                       static_cast<int64_t>(gridDim.x) * kThreads,
                       [f](int64_t, float v) { return v * f; });
}

template <typename T>
cudaError_t launch(void* logits, const int64_t* target, float* loss, int64_t rows, int64_t vocab,
                   int64_t ignore_index, const float* grad_factor, cudaStream_t stream) {
  cross_entropy_rows<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<T*>(logits), target, loss, vocab, ignore_index, grad_factor);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_scale(void* values, int64_t n, const float* factor, cudaStream_t stream) {
  constexpr int64_t kMaxBlocks = 132 * 8;  // enough to fill an H100's SMs; the loop does the rest
  const int64_t blocks =
      std::min<int64_t>(kMaxBlocks, (n / (16 / sizeof(T)) + kThreads - 1) / kThreads + 1);
  scale_values<T>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(static_cast<T*>(values), n, factor);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_cross_entropy(LogitKind kind, void* logits, const int64_t* target, float* loss,
                                 int64_t rows, int64_t vocab, int64_t ignore_index,
                                 const float* grad_factor, cudaStream_t stream) {
  if (rows <= 0 || vocab <= 0 || rows > 0x7fffffff) return cudaErrorInvalidValue;
  switch (kind) {
    case LogitKind::fp32:
      return launch<float>(logits, target, loss, rows, vocab, ignore_index, grad_factor, stream);
    case LogitKind::fp16:
      return launch<__half>(logits, target, loss, rows, vocab, ignore_index, grad_factor, stream);
    case LogitKind::bf16:
      return launch<__nv_bfloat16>(logits, target, loss, rows, vocab, ignore_index, grad_factor,
                                   stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_scale_in_place(LogitKind kind, void* values, int64_t n, const float* factor,
                                  cudaStream_t stream) {
  if (n <= 0) return cudaErrorInvalidValue;
  switch (kind) {
    case LogitKind::fp32:
      return launch_scale<float>(values, n, factor, stream);
    case LogitKind::fp16:
      return launch_scale<__half>(values, n, factor, stream);
    case LogitKind::bf16:
      return launch_scale<__nv_bfloat16>(values, n, factor, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuscope::workloads
