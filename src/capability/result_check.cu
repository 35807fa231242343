#include <cstdint>

#include "capability/result_check.h"
#include "cuda/cuda_error.h"

namespace gpuscope::capability::detail {

namespace {

// W is the element's bit pattern; exponent_mask == 0 means an integer type (no NaN or Inf).
template <typename W>
__device__ __forceinline__ void tally(uint4 result, uint4 first, W exponent_mask, W mantissa_mask,
                                      unsigned long long& mismatches, unsigned long long& nans,
                                      unsigned long long& infs) {
  constexpr int kPerVector = 16 / sizeof(W);
  W r[kPerVector];
  W f[kPerVector];
  memcpy(r, &result, 16);
  memcpy(f, &first, 16);
#pragma unroll
  for (int k = 0; k < kPerVector; ++k) {
    mismatches += r[k] != f[k];
    const bool special = exponent_mask != 0 && (r[k] & exponent_mask) == exponent_mask;
    const bool fraction = (r[k] & mantissa_mask) != 0;
    nans += special && fraction;
    infs += special && !fraction;
  }
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <typename W>
__global__ void compare_kernel(const uint4* __restrict__ result, const uint4* __restrict__ first,
                               std::size_t vectors, W exponent_mask, W mantissa_mask,
                               CheckCounters* counters) {
  unsigned long long mismatches = 0;
  unsigned long long nans = 0;
  unsigned long long infs = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t v = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Two vectors per iteration so that four 16-byte loads are in flight per thread.
  for (; v + stride < vectors; v += 2 * stride) {
    const uint4 r0 = __ldcs(result + v);
    const uint4 f0 = __ldcs(first + v);
    const uint4 r1 = __ldcs(result + v + stride);
    const uint4 f1 = __ldcs(first + v + stride);
    tally<W>(r0, f0, exponent_mask, mantissa_mask, mismatches, nans, infs);
    tally<W>(r1, f1, exponent_mask, mantissa_mask, mismatches, nans, infs);
  }
  if (v < vectors) {
    tally<W>(__ldcs(result + v), __ldcs(first + v), exponent_mask, mantissa_mask, mismatches, nans,
             infs);
  }
  mismatches = warp_sum(mismatches);
  nans = warp_sum(nans);
  infs = warp_sum(infs);
  if ((threadIdx.x & 31) == 0) {
    if (mismatches) atomicAdd(&counters->mismatches, mismatches);
    if (nans) atomicAdd(&counters->nan_count, nans);
    if (infs) atomicAdd(&counters->inf_count, infs);
  }
}

template <typename W>
Status launch_typed(const void* result, const void* first, std::size_t bytes, W exponent_mask,
                    W mantissa_mask, CheckCounters* counters, int sm_count, cudaStream_t stream) {
  const int blocks = sm_count * 8;
  compare_kernel<W><<<blocks, 256, 0, stream>>>(static_cast<const uint4*>(result),
                                                static_cast<const uint4*>(first), bytes / 16,
                                                exponent_mask, mantissa_mask, counters);
  return GPUSCOPE_API_CHECK(cudaGetLastError());
}

__global__ void corrupt_kernel(unsigned char* byte) {
  *byte ^= 1u;
}

}  // namespace

Status launch_compare(ElementType type, const void* result, const void* first, std::size_t count,
                      CheckCounters* counters, int sm_count, cudaStream_t stream) {
  const std::size_t bytes = count * element_bytes(type);
  if (bytes % 16 != 0) return Status(Code::internal, "launch_compare: size not a multiple of 16");
  switch (type) {
    case ElementType::f64:
      return launch_typed<std::uint64_t>(result, first, bytes, 0x7FF0000000000000ull,
                                         0x000FFFFFFFFFFFFFull, counters, sm_count, stream);
    case ElementType::f32:
      return launch_typed<std::uint32_t>(result, first, bytes, 0x7F800000u, 0x007FFFFFu, counters,
                                         sm_count, stream);
    case ElementType::f16:
      return launch_typed<std::uint16_t>(result, first, bytes, std::uint16_t{0x7C00},
                                         std::uint16_t{0x03FF}, counters, sm_count, stream);
    case ElementType::bf16:
      return launch_typed<std::uint16_t>(result, first, bytes, std::uint16_t{0x7F80},
                                         std::uint16_t{0x007F}, counters, sm_count, stream);
    case ElementType::i32:
      return launch_typed<std::uint32_t>(result, first, bytes, 0u, 0u, counters, sm_count, stream);
    case ElementType::e4m3:
    case ElementType::i8:
      break;
  }
  return Status(Code::internal, "launch_compare: not an output type");
}

Status launch_corrupt(ElementType type, void* result, std::size_t index, cudaStream_t stream) {
  corrupt_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned char*>(result) +
                                      index * element_bytes(type));
  return GPUSCOPE_API_CHECK(cudaGetLastError());
}

}  // namespace gpuscope::capability::detail
