#include <cuda_bf16.h>

#include <algorithm>

#include "distributed/average_kernel.h"

namespace gpuscope::workloads {
namespace {

struct Inputs {
  const void* p[kAverageMaxInputs];
};

__device__ float load(const float* p, int64_t i) {
  return p[i];
}
__device__ float load(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ void store(float* p, int64_t i, float v) {
  p[i] = v;
}
__device__ void store(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

template <typename T>
__global__ void average(T* out, Inputs in, int n, float inverse, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    float sum = load(static_cast<const T*>(in.p[0]), i);
    for (int k = 1; k < n; ++k) sum = __fadd_rn(sum, load(static_cast<const T*>(in.p[k]), i));
    store(out, i, __fmul_rn(sum, inverse));
  }
}

}  // namespace

cudaError_t launch_chunk_average(AverageKind kind, void* out, const void* const* inputs, int n,
                                 int64_t count, cudaStream_t stream) {
  if (n < 2 || n > kAverageMaxInputs || count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  Inputs in{};
  for (int k = 0; k < n; ++k) in.p[k] = inputs[k];
  constexpr int kThreads = 256;
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((count + kThreads - 1) / kThreads, 4096));
  const float inverse = 1.0f / static_cast<float>(n);
  if (kind == AverageKind::fp32) {
    average<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(out), in, n, inverse, count);
  } else {
    average<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(out), in, n, inverse,
                                             count);
  }
  return cudaGetLastError();
}

}  // namespace gpuscope::workloads
