// cudaError_t -> Status, for GPUSCOPE_API_CHECK (common/api_check.h).
#pragma once

#include <cuda_runtime_api.h>

#include "common/api_check.h"

namespace gpuscope::detail {
template <>
struct ApiErrorTraits<cudaError_t> {
  static ApiError describe(cudaError_t status);
};
}  // namespace gpuscope::detail
