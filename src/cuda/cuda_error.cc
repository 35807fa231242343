#include "cuda/cuda_error.h"

#include <fmt/format.h>

namespace gpuscope::detail {
namespace {

Code code_for(cudaError_t status) {
  switch (status) {
    case cudaSuccess:
      return Code::ok;
    case cudaErrorInsufficientDriver:
      return Code::no_driver;
    case cudaErrorNoDevice:
      return Code::no_device;
    case cudaErrorMemoryAllocation:
      return Code::out_of_memory;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
      return Code::invalid_argument;
    case cudaErrorNotSupported:
      return Code::not_supported;
    case cudaErrorNotPermitted:
      return Code::permission_denied;
    case cudaErrorDevicesUnavailable:  // exclusive/prohibited compute mode, or busy
      return Code::permission_denied;
    case cudaErrorECCUncorrectable:
      return Code::gpu_lost;
    default:
      return Code::internal;
  }
}

}  // namespace

ApiError ApiErrorTraits<cudaError_t>::describe(cudaError_t status) {
  return ApiError{status == cudaSuccess, code_for(status),
                  fmt::format("{} ({})", cudaGetErrorName(status), cudaGetErrorString(status))};
}

}  // namespace gpuscope::detail
