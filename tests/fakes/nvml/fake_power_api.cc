// Power readings, limits and the energy counter, and the setters the sweep uses: the power
// limit and the SM clock lock.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "api_call.h"
#include "power_model.h"

using gpuscope::fake_nvml::ApiCall;
using gpuscope::fake_nvml::write_value;

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device,
                                                               unsigned int* power) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return gpuscope::fake_nvml::write_reading(call, "power_mw", power);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto energy_mj =
      gpuscope::fake_nvml::total_energy_mj(call.state(), call.device_index(), call.now());
  if (!energy_mj) return NVML_ERROR_NOT_SUPPORTED;
  if (energy == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  // A counter of whole millijoules, so it never runs ahead of the energy actually used.
  *energy = static_cast<unsigned long long>(std::floor(*energy_mj + 1e-6));
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device,
                                                                         unsigned int* limit) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_value(gpuscope::fake_nvml::current_power_limit_mw(call.state(), call.device_index()),
                     limit);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* defaultLimit) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_value(call.device().power_limits.default_mw, defaultLimit);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(
    nvmlDevice_t device, unsigned int* minLimit, unsigned int* maxLimit) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& limits = call.device().power_limits;
  if (!limits.min_mw || !limits.max_mw) return NVML_ERROR_NOT_SUPPORTED;
  if (minLimit == nullptr || maxLimit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *minLimit = *limits.min_mw;
  *maxLimit = *limits.max_mw;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device,
                                                                       unsigned int* limit) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_value(
      gpuscope::fake_nvml::enforced_power_limit_mw(call.state(), call.device_index()), limit);
}

// Needs the scenario's min and max limits (a GPU without them cannot be capped) and checks the
// new limit against them, as the driver does.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device,
                                                                         unsigned int limit) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& limits = call.device().power_limits;
  if (!limits.min_mw || !limits.max_mw) return NVML_ERROR_NOT_SUPPORTED;
  if (limit < *limits.min_mw || limit > *limits.max_mw) return NVML_ERROR_INVALID_ARGUMENT;
  gpuscope::fake_nvml::change_device_settings(
      call.state(), call.device_index(),
      [&](gpuscope::fake_nvml::DeviceSettings& settings) { settings.power_limit_mw = limit; });
  return NVML_SUCCESS;
}

// The SM clock lock (Volta and newer). A device's lockable clocks are the graphics clocks from
// its max_clocks.graphics_mhz down in 15 MHz steps to 210 MHz, listed for its one memory clock
// max_clocks.mem_mhz, as a GeForce/data-centre card lists them; a device without both maxima
// cannot lock its clocks (NOT_SUPPORTED).
namespace {

constexpr unsigned kLowestClockMhz = 210;
constexpr unsigned kClockStepMhz = 15;

bool can_lock(const gpuscope::fake_nvml::Device& device) {
  return device.max_clocks.mem_mhz && device.max_clocks.graphics_mhz &&
         *device.max_clocks.graphics_mhz >= kLowestClockMhz;
}

nvmlReturn_t write_list(const std::vector<unsigned>& values, unsigned* count, unsigned* out) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto capacity = *count;
  *count = static_cast<unsigned>(values.size());
  if (capacity < values.size() || out == nullptr) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::copy(values.begin(), values.end(), out);
  return NVML_SUCCESS;
}

}  // namespace

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device,
                                                                          unsigned int* count,
                                                                          unsigned int* clocksMHz) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (!can_lock(call.device())) return NVML_ERROR_NOT_SUPPORTED;
  return write_list({*call.device().max_clocks.mem_mhz}, count, clocksMHz);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memoryClockMHz,
                                     unsigned int* count, unsigned int* clocksMHz) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& max = call.device().max_clocks;
  if (!can_lock(call.device())) return NVML_ERROR_NOT_SUPPORTED;
  if (memoryClockMHz != *max.mem_mhz) return NVML_ERROR_NOT_FOUND;
  std::vector<unsigned> clocks;
  for (unsigned mhz = *max.graphics_mhz; mhz >= kLowestClockMhz; mhz -= kClockStepMhz) {
    clocks.push_back(mhz);
  }
  return write_list(clocks, count, clocksMHz);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device,
                                                                    unsigned int minGpuClockMHz,
                                                                    unsigned int maxGpuClockMHz) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (!can_lock(call.device())) return NVML_ERROR_NOT_SUPPORTED;
  if (minGpuClockMHz == 0 || minGpuClockMHz > maxGpuClockMHz) return NVML_ERROR_INVALID_ARGUMENT;
  gpuscope::fake_nvml::change_device_settings(
      call.state(), call.device_index(), [&](gpuscope::fake_nvml::DeviceSettings& settings) {
        settings.locked_clocks_mhz = std::pair{minGpuClockMHz, maxGpuClockMHz};
      });
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (!can_lock(call.device())) return NVML_ERROR_NOT_SUPPORTED;
  gpuscope::fake_nvml::change_device_settings(
      call.state(), call.device_index(),
      [](gpuscope::fake_nvml::DeviceSettings& settings) { settings.locked_clocks_mhz.reset(); });
  return NVML_SUCCESS;
}
