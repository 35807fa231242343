// Streaming kernels for device-memory bandwidth and the compute side of the overlap test.
// REQUIRES for the streaming kernels: buffers 16-byte aligned, bytes a multiple of 16.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::capability::detail {

// Ways to copy, all with 16-byte vectors; which is fastest depends on the GPU, so the
// bandwidth test times each and keeps the best (as for the cuBLASLt algorithms).
enum class CopyVariant {
  grid_stride,    // four vectors in flight per thread, a grid-stride loop (sm_count*8 blocks)
  tiles_stream,   // each block copies 16 KiB tiles, loads/stores marked streaming (evict first)
  one_pass,       // one 16 KiB tile per block, no loop, streaming
  one_pass_wide,  // one 32 KiB tile per block, no loop, plain loads and stores
};
inline constexpr CopyVariant kCopyVariants[] = {CopyVariant::grid_stride, CopyVariant::tiles_stream,
                                                CopyVariant::one_pass, CopyVariant::one_pass_wide};
std::string_view copy_variant_name(CopyVariant variant);

Status launch_copy_kernel(CopyVariant variant, const void* src, void* dst, std::size_t bytes,
                          int sm_count, cudaStream_t stream);
// Reads every byte; writes 16 bytes to `sink` only when the data XORs to an unlikely value,
// which keeps the compiler from dropping the loads.
Status launch_read_kernel(const void* src, std::size_t bytes, void* sink, int blocks,
                          cudaStream_t stream);
Status launch_write_kernel(void* dst, std::size_t bytes, int blocks, cudaStream_t stream);

// Arithmetic only (four dependent FMA chains per thread, `iterations` long): busy SMs, almost
// no memory traffic. Writes one float per thread to `out` (blocks * 256 floats).
Status launch_spin_kernel(float* out, int iterations, int blocks, cudaStream_t stream);

}  // namespace gpuscope::capability::detail
