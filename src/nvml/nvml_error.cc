#include "nvml/nvml_error.h"

#include <atomic>

namespace gpuscope::nvml::detail {
namespace {
std::atomic<decltype(&::nvmlErrorString)> g_error_string{nullptr};
}

void set_error_string_function(decltype(&::nvmlErrorString) fn) {
  g_error_string.store(fn);
}
}  // namespace gpuscope::nvml::detail

namespace gpuscope::detail {
namespace {

Code code_for(nvmlReturn_t status) {
  switch (status) {
    case NVML_SUCCESS:
      return Code::ok;
    case NVML_ERROR_INVALID_ARGUMENT:
      return Code::invalid_argument;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:  // the driver predates the struct we pass
      return Code::not_supported;
    case NVML_ERROR_NO_PERMISSION:
      return Code::permission_denied;
    case NVML_ERROR_NOT_FOUND:
      return Code::not_found;
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIBRARY_NOT_FOUND:
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return Code::no_driver;
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_RESET_REQUIRED:
      return Code::gpu_lost;
    case NVML_ERROR_TIMEOUT:
      return Code::timeout;
    case NVML_ERROR_MEMORY:
      return Code::out_of_memory;
    default:
      return Code::internal;
  }
}

const char* builtin_name(nvmlReturn_t status) {
  switch (status) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    default:
      return "Unknown Error";
  }
}

}  // namespace

ApiError ApiErrorTraits<nvmlReturn_t>::describe(nvmlReturn_t status) {
  ApiError error;
  error.ok = status == NVML_SUCCESS;
  error.code = code_for(status);
  auto fn = nvml::detail::g_error_string.load();
  const char* text = fn ? fn(status) : nullptr;
  error.library_message = text ? text : builtin_name(status);
  return error;
}

}  // namespace gpuscope::detail
