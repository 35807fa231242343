// Random GEMM inputs generated on the GPU: element i of a buffer is a hash of (seed, i), so the
// data never depends on what the memory held before and the host can regenerate it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "capability/gemm_spec.h"
#include "gpuscope/status.h"

namespace gpuscope::capability::detail {

// Fills `count` elements of `type` with values uniform in [-range, range] (integers for i8 and
// i32; e4m3 rounds to its nearest representable value). Enqueued on `stream`.
Status fill_random(ElementType type, void* data, std::size_t count, double range,
                   std::uint64_t seed, int sm_count, cudaStream_t stream);

}  // namespace gpuscope::capability::detail
