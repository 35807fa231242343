#include "cuda/cuda_error.h"

#include <fmt/format.h>

namespace gpuscope::detail {
namespace {

Code code_for(cudaError_t status) {
  switch (status) {
    case cudaSuccess:
      return Code::ok;
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
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
    case cudaErrorDevicesUnavailable:  // exclusive-process or prohibited compute mode
      return Code::permission_denied;
    // Sticky errors: the context (often the GPU) is unusable until the process ends. In code
    // whose kernels are verified, they point at the hardware, so they read as a lost GPU.
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorContained:
    case cudaErrorUnknown:
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
