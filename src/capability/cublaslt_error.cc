#include "capability/cublaslt_error.h"

#include <fmt/format.h>

namespace gpuscope::detail {

namespace {

Code code_for(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return Code::ok;
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return Code::no_driver;
    case CUBLAS_STATUS_ALLOC_FAILED:
      return Code::out_of_memory;
    case CUBLAS_STATUS_INVALID_VALUE:
      return Code::invalid_argument;
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return Code::not_supported;
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return Code::gpu_lost;
    case CUBLAS_STATUS_LICENSE_ERROR:
      return Code::permission_denied;
    default:
      return Code::internal;
  }
}

}  // namespace

ApiError ApiErrorTraits<cublasStatus_t>::describe(cublasStatus_t status) {
  return ApiError{
      status == CUBLAS_STATUS_SUCCESS, code_for(status),
      fmt::format("{} ({})", cublasLtGetStatusName(status), cublasLtGetStatusString(status))};
}

}  // namespace gpuscope::detail
