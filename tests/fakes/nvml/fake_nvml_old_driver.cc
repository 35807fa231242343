// libgpuscope_fake_nvml_old_driver.so: an NVML from before the versioned entry points, for the
// adapter's tests of falling back to older symbols and of reading missing optional symbols as
// "unsupported". It exports exactly these eight functions and nothing else:
//   nvmlInit, nvmlShutdown, nvmlErrorString        (no nvmlInit_v2)
//   nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex (no _v2 names)
//   nvmlDeviceGetName, nvmlDeviceGetUUID
//   nvmlDeviceGetCurrentClocksThrottleReasons      (the old name of ...ClocksEventReasons)
// One GPU with fixed values: name "Fake Old Driver GPU", UUID
// "GPU-01d0d000-0000-4000-8000-000000000001", clock reasons 0x4 (SW power cap). It reads no
// scenario and shares no state with libgpuscope_fake_nvml.so.
#include <mutex>
#include <string_view>

#include "fake_nvml_export.h"
#include "nvml_strings.h"

struct nvmlDevice_st {
  unsigned char unused;
};

namespace {

using gpuscope::fake_nvml::copy_string;

constexpr std::string_view kName = "Fake Old Driver GPU";
constexpr std::string_view kUuid = "GPU-01d0d000-0000-4000-8000-000000000001";
constexpr unsigned long long kClockReasons = 0x4;  // nvmlClocksThrottleReasonSwPowerCap

std::mutex g_mutex;
unsigned g_refcount = 0;
nvmlDevice_st g_device{};

bool initialized() {
  std::lock_guard lock(g_mutex);
  return g_refcount > 0;
}

// The checks every device call makes, in the real library's order.
nvmlReturn_t check_device(nvmlDevice_t device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  return device == &g_device ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

}  // namespace

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlInit(void) {
  std::lock_guard lock(g_mutex);
  ++g_refcount;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  std::lock_guard lock(g_mutex);
  if (g_refcount == 0) return NVML_ERROR_UNINITIALIZED;
  --g_refcount;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    default:
      return "Unknown Error";
  }
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* deviceCount) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (deviceCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = 1;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
                                                                  nvmlDevice_t* device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (index != 0 || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_device;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                         unsigned int length) {
  if (const nvmlReturn_t rc = check_device(device); rc != NVML_SUCCESS) return rc;
  return copy_string(kName, name, length);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                         unsigned int length) {
  if (const nvmlReturn_t rc = check_device(device); rc != NVML_SUCCESS) return rc;
  return copy_string(kUuid, uuid, length);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(
    nvmlDevice_t device, unsigned long long* clocksThrottleReasons) {
  if (const nvmlReturn_t rc = check_device(device); rc != NVML_SUCCESS) return rc;
  if (clocksThrottleReasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *clocksThrottleReasons = kClockReasons;
  return NVML_SUCCESS;
}
