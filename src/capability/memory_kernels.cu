#include <cstdint>

#include "capability/memory_kernels.h"
#include "cuda/cuda_error.h"

namespace gpuscope::capability::detail {

namespace {

constexpr int kThreads = 256;

__global__ void grid_stride_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                 std::size_t vectors) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    const uint4 a = src[i];
    const uint4 b = src[i + stride];
    const uint4 c = src[i + 2 * stride];
    const uint4 d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < vectors; i += stride) dst[i] = src[i];
}

// Block b copies tiles of kThreads * kUnroll contiguous vectors: b, b + gridDim.x, ...
template <int kUnroll, bool kStreaming>
__global__ void tile_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                          std::size_t vectors) {
  const std::size_t tile = static_cast<std::size_t>(blockDim.x) * kUnroll;
  for (std::size_t base = blockIdx.x * tile; base < vectors; base += gridDim.x * tile) {
    uint4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x + threadIdx.x;
      if (i < vectors) v[k] = kStreaming ? __ldcs(src + i) : src[i];
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x + threadIdx.x;
      if (i < vectors) {
        if (kStreaming) {
          __stcs(dst + i, v[k]);
        } else {
          dst[i] = v[k];
        }
      }
    }
  }
}

unsigned tiles_for(std::size_t vectors, int unroll) {
  const std::size_t tile = static_cast<std::size_t>(kThreads) * unroll;
  return static_cast<unsigned>((vectors + tile - 1) / tile);
}

__device__ __forceinline__ uint4 xor4(uint4 x, uint4 y) {
  return make_uint4(x.x ^ y.x, x.y ^ y.y, x.z ^ y.z, x.w ^ y.w);
}

__global__ void read_kernel(const uint4* __restrict__ src, std::size_t vectors, uint4* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    const uint4 a = src[i];
    const uint4 b = src[i + stride];
    const uint4 c = src[i + 2 * stride];
    const uint4 d = src[i + 3 * stride];
    acc = xor4(acc, xor4(xor4(a, b), xor4(c, d)));
  }
  for (; i < vectors; i += stride) acc = xor4(acc, src[i]);
  if (acc.x == 0x9E3779B9u && acc.y == 0x7F4A7C15u && acc.z == 0xF39CC060u && acc.w == 1u) {
    *sink = acc;
  }
}

__global__ void write_kernel(uint4* __restrict__ dst, std::size_t vectors) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint4 value =
      make_uint4(static_cast<unsigned>(i), 0x5A5A5A5Au, ~static_cast<unsigned>(i), 0xA5A5A5A5u);
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    dst[i] = value;
    dst[i + stride] = value;
    dst[i + 2 * stride] = value;
    dst[i + 3 * stride] = value;
  }
  for (; i < vectors; i += stride) dst[i] = value;
}

__global__ void spin_kernel(float* out, int iterations) {
  float a = 1.0f + threadIdx.x * 1e-7f;
  float b = 1.0f - threadIdx.x * 1e-7f;
  float c = 0.5f;
  float d = -0.5f;
  for (int k = 0; k < iterations; ++k) {
    a = fmaf(a, 0.9999999f, 1e-7f);
    b = fmaf(b, 0.9999999f, 1e-7f);
    c = fmaf(c, 0.9999999f, 1e-7f);
    d = fmaf(d, 0.9999999f, 1e-7f);
  }
  out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = a + b + c + d;
}

}  // namespace

std::string_view copy_variant_name(CopyVariant variant) {
  switch (variant) {
    case CopyVariant::grid_stride:
      return "grid_stride";
    case CopyVariant::tiles_stream:
      return "tiles_stream";
    case CopyVariant::one_pass:
      return "one_pass";
    case CopyVariant::one_pass_wide:
      return "one_pass_wide";
  }
  return "unknown";
}

Status launch_copy_kernel(CopyVariant variant, const void* src, void* dst, std::size_t bytes,
                          int sm_count, cudaStream_t stream) {
  const auto* in = static_cast<const uint4*>(src);
  auto* out = static_cast<uint4*>(dst);
  const std::size_t vectors = bytes / 16;
  switch (variant) {
    case CopyVariant::grid_stride:
      grid_stride_copy<<<sm_count * 8, kThreads, 0, stream>>>(in, out, vectors);
      break;
    case CopyVariant::tiles_stream:
      tile_copy<4, true><<<sm_count * 8, kThreads, 0, stream>>>(in, out, vectors);
      break;
    case CopyVariant::one_pass:
      tile_copy<4, true><<<tiles_for(vectors, 4), kThreads, 0, stream>>>(in, out, vectors);
      break;
    case CopyVariant::one_pass_wide:
      tile_copy<8, false><<<tiles_for(vectors, 8), kThreads, 0, stream>>>(in, out, vectors);
      break;
  }
  return GPUSCOPE_API_CHECK(cudaGetLastError());
}

Status launch_read_kernel(const void* src, std::size_t bytes, void* sink, int blocks,
                          cudaStream_t stream) {
  read_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(src), bytes / 16,
                                               static_cast<uint4*>(sink));
  return GPUSCOPE_API_CHECK(cudaGetLastError());
}

Status launch_write_kernel(void* dst, std::size_t bytes, int blocks, cudaStream_t stream) {
  write_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<uint4*>(dst), bytes / 16);
  return GPUSCOPE_API_CHECK(cudaGetLastError());
}

Status launch_spin_kernel(float* out, int iterations, int blocks, cudaStream_t stream) {
  spin_kernel<<<blocks, kThreads, 0, stream>>>(out, iterations);
  return GPUSCOPE_API_CHECK(cudaGetLastError());
}

}  // namespace gpuscope::capability::detail
