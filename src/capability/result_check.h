// GPU side of burn's verification (the rules are in verify.h): count elements of a result that
// differ bit for bit from the first result of the same inputs, and NaN / Inf elements. Counts
// accumulate in device memory until the caller reads and resets them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "capability/gemm_spec.h"
#include "gpuscope/status.h"

namespace gpuscope::capability::detail {

struct CheckCounters {  // device memory, updated with atomics
  unsigned long long mismatches;
  unsigned long long nan_count;
  unsigned long long inf_count;
};

// REQUIRES: count * element_bytes(type) is a multiple of 16; both buffers 16-byte aligned;
// type is an output type (f64, f32, f16, bf16, i32). `first` may equal `result` (NaN/Inf count
// only).
Status launch_compare(ElementType type, const void* result, const void* first, std::size_t count,
                      CheckCounters* counters, int sm_count, cudaStream_t stream);

// Fault injection: flips the lowest bit of element `index` of `result`.
Status launch_corrupt(ElementType type, void* result, std::size_t index, cudaStream_t stream);

}  // namespace gpuscope::capability::detail
