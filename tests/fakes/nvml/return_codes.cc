#include "return_codes.h"

#include <array>

namespace gpuscope::fake_nvml {
namespace {

struct ReturnCodeInfo {
  nvmlReturn_t code;
  std::string_view name;
  const char* message;
};

// Messages as libnvidia-ml words them (pynvml carries the same table for older drivers), so
// that text the adapter shows a user reads the same with the fake as with a driver.
constexpr std::array kReturnCodes = {
    ReturnCodeInfo{NVML_SUCCESS, "NVML_SUCCESS", "Success"},
    ReturnCodeInfo{NVML_ERROR_UNINITIALIZED, "NVML_ERROR_UNINITIALIZED", "Uninitialized"},
    ReturnCodeInfo{NVML_ERROR_INVALID_ARGUMENT, "NVML_ERROR_INVALID_ARGUMENT", "Invalid Argument"},
    ReturnCodeInfo{NVML_ERROR_NOT_SUPPORTED, "NVML_ERROR_NOT_SUPPORTED", "Not Supported"},
    ReturnCodeInfo{NVML_ERROR_NO_PERMISSION, "NVML_ERROR_NO_PERMISSION",
                   "Insufficient Permissions"},
    ReturnCodeInfo{NVML_ERROR_ALREADY_INITIALIZED, "NVML_ERROR_ALREADY_INITIALIZED",
                   "Already Initialized"},
    ReturnCodeInfo{NVML_ERROR_NOT_FOUND, "NVML_ERROR_NOT_FOUND", "Not Found"},
    ReturnCodeInfo{NVML_ERROR_INSUFFICIENT_SIZE, "NVML_ERROR_INSUFFICIENT_SIZE",
                   "Insufficient Size"},
    ReturnCodeInfo{NVML_ERROR_INSUFFICIENT_POWER, "NVML_ERROR_INSUFFICIENT_POWER",
                   "Insufficient External Power"},
    ReturnCodeInfo{NVML_ERROR_DRIVER_NOT_LOADED, "NVML_ERROR_DRIVER_NOT_LOADED",
                   "Driver Not Loaded"},
    ReturnCodeInfo{NVML_ERROR_TIMEOUT, "NVML_ERROR_TIMEOUT", "Timeout"},
    ReturnCodeInfo{NVML_ERROR_IRQ_ISSUE, "NVML_ERROR_IRQ_ISSUE", "Interrupt Request Issue"},
    ReturnCodeInfo{NVML_ERROR_LIBRARY_NOT_FOUND, "NVML_ERROR_LIBRARY_NOT_FOUND",
                   "NVML Shared Library Not Found"},
    ReturnCodeInfo{NVML_ERROR_FUNCTION_NOT_FOUND, "NVML_ERROR_FUNCTION_NOT_FOUND",
                   "Function Not Found"},
    ReturnCodeInfo{NVML_ERROR_CORRUPTED_INFOROM, "NVML_ERROR_CORRUPTED_INFOROM",
                   "Corrupted infoROM"},
    ReturnCodeInfo{NVML_ERROR_GPU_IS_LOST, "NVML_ERROR_GPU_IS_LOST", "GPU is lost"},
    ReturnCodeInfo{NVML_ERROR_RESET_REQUIRED, "NVML_ERROR_RESET_REQUIRED", "GPU requires restart"},
    ReturnCodeInfo{NVML_ERROR_OPERATING_SYSTEM, "NVML_ERROR_OPERATING_SYSTEM",
                   "The operating system has blocked the request."},
    ReturnCodeInfo{NVML_ERROR_LIB_RM_VERSION_MISMATCH, "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
                   "RM has detected an NVML/RM version mismatch."},
    ReturnCodeInfo{NVML_ERROR_IN_USE, "NVML_ERROR_IN_USE", "In use by another client"},
    ReturnCodeInfo{NVML_ERROR_MEMORY, "NVML_ERROR_MEMORY", "Insufficient Memory"},
    ReturnCodeInfo{NVML_ERROR_NO_DATA, "NVML_ERROR_NO_DATA", "No data"},
    ReturnCodeInfo{NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
                   "The requested vgpu operation is not available on target device, because ECC "
                   "is enabled"},
    ReturnCodeInfo{NVML_ERROR_INSUFFICIENT_RESOURCES, "NVML_ERROR_INSUFFICIENT_RESOURCES",
                   "Insufficient Resources"},
    ReturnCodeInfo{NVML_ERROR_FREQ_NOT_SUPPORTED, "NVML_ERROR_FREQ_NOT_SUPPORTED",
                   "Frequency not supported"},
    ReturnCodeInfo{NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
                   "Argument version mismatch"},
    ReturnCodeInfo{NVML_ERROR_DEPRECATED, "NVML_ERROR_DEPRECATED", "Deprecated"},
    ReturnCodeInfo{NVML_ERROR_NOT_READY, "NVML_ERROR_NOT_READY", "Not Ready"},
    ReturnCodeInfo{NVML_ERROR_GPU_NOT_FOUND, "NVML_ERROR_GPU_NOT_FOUND", "GPU not found"},
    ReturnCodeInfo{NVML_ERROR_INVALID_STATE, "NVML_ERROR_INVALID_STATE", "Invalid state"},
    ReturnCodeInfo{NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED",
                   "Reset type not supported"},
    ReturnCodeInfo{NVML_ERROR_UNKNOWN, "NVML_ERROR_UNKNOWN", "Unknown Error"},
};

}  // namespace

std::optional<nvmlReturn_t> return_code_from_name(std::string_view name) {
  for (const ReturnCodeInfo& info : kReturnCodes) {
    if (info.name == name) return info.code;
  }
  return std::nullopt;
}

const char* return_code_message(nvmlReturn_t code) {
  for (const ReturnCodeInfo& info : kReturnCodes) {
    if (info.code == code) return info.message;
  }
  return "Unknown Error";
}

}  // namespace gpuscope::fake_nvml
