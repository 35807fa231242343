#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "capability/random_fill.h"
#include "cuda/cuda_error.h"

namespace gpuscope::capability::detail {

namespace {

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1), 53 random bits.
__device__ __forceinline__ double uniform_signed(std::uint64_t seed, std::size_t i) {
  const std::uint64_t bits = splitmix64(seed ^ splitmix64(i));
  return static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;
}

template <typename T>
__device__ __forceinline__ T convert(double v);
template <>
__device__ __forceinline__ double convert<double>(double v) {
  return v;
}
template <>
__device__ __forceinline__ float convert<float>(double v) {
  return static_cast<float>(v);
}
template <>
__device__ __forceinline__ __half convert<__half>(double v) {
  return __double2half(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 convert<__nv_bfloat16>(double v) {
  return __double2bfloat16(v);
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(double v) {
  return __nv_fp8_e4m3(static_cast<float>(v));
}
template <>
__device__ __forceinline__ std::int8_t convert<std::int8_t>(double v) {
  return static_cast<std::int8_t>(__double2int_rn(v));
}
template <>
__device__ __forceinline__ std::int32_t convert<std::int32_t>(double v) {
  return __double2int_rn(v);
}

template <typename T>
__global__ void fill_kernel(T* out, std::size_t count, double range, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = convert<T>(uniform_signed(seed, i) * range);
  }
}

template <typename T>
Status launch(void* data, std::size_t count, double range, std::uint64_t seed, int sm_count,
              cudaStream_t stream) {
  const int blocks = sm_count * 8;
  fill_kernel<T><<<blocks, 256, 0, stream>>>(static_cast<T*>(data), count, range, seed);
  return GPUSCOPE_API_CHECK(cudaGetLastError());
}

}  // namespace

Status fill_random(ElementType type, void* data, std::size_t count, double range,
                   std::uint64_t seed, int sm_count, cudaStream_t stream) {
  switch (type) {
    case ElementType::f64:
      return launch<double>(data, count, range, seed, sm_count, stream);
    case ElementType::f32:
      return launch<float>(data, count, range, seed, sm_count, stream);
    case ElementType::f16:
      return launch<__half>(data, count, range, seed, sm_count, stream);
    case ElementType::bf16:
      return launch<__nv_bfloat16>(data, count, range, seed, sm_count, stream);
    case ElementType::e4m3:
      return launch<__nv_fp8_e4m3>(data, count, range, seed, sm_count, stream);
    case ElementType::i8:
      return launch<std::int8_t>(data, count, range, seed, sm_count, stream);
    case ElementType::i32:
      return launch<std::int32_t>(data, count, range, seed, sm_count, stream);
  }
  return Status(Code::internal, "fill_random: unknown element type");
}

}  // namespace gpuscope::capability::detail
