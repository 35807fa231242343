// cublasStatus_t -> Status, for GPUSCOPE_API_CHECK (common/api_check.h). The CUDA runtime's
// half is cuda/cuda_error.h.
#pragma once

#include <cublasLt.h>

#include "common/api_check.h"
#include "cuda/cuda_error.h"

namespace gpuscope::detail {

// CUBLAS_STATUS_ALLOC_FAILED -> out_of_memory; NOT_SUPPORTED / ARCH_MISMATCH -> not_supported;
// EXECUTION_FAILED (a kernel failed on the GPU) -> gpu_lost; NOT_INITIALIZED (no usable driver)
// -> no_driver; INVALID_VALUE -> invalid_argument; the rest -> internal. The message carries
// cublasLtGetStatusName / cublasLtGetStatusString.
template <>
struct ApiErrorTraits<cublasStatus_t> {
  static ApiError describe(cublasStatus_t status);
};

}  // namespace gpuscope::detail
