#include <fmt/format.h>

#include "gpuscope/nvml.h"
#include "nvml/nvml_api.h"
#include "nvml/nvml_error.h"

namespace gpuscope::nvml {

struct Session::Loaded {
  std::unique_ptr<detail::Library> library;
};

Result<std::unique_ptr<Session>> Session::open(const LoadOptions& options) {
  auto candidates = options.library_candidates.empty() ? detail::default_library_candidates()
                                                       : options.library_candidates;
  GPUSCOPE_ASSIGN_OR_RETURN(auto library, detail::Library::load(candidates));
  Status init = GPUSCOPE_NVML_CALL(library->api(), nvmlInit_v2);
  if (!init.ok()) {
    if (init.code() == Code::no_driver) {
      return Status(Code::no_driver,
                    fmt::format("the NVIDIA driver is not running (NVML loaded from {}): {}",
                                library->path(), init.message()));
    }
    return init.with_context("could not initialize NVML");
  }
  auto loaded = std::make_unique<Loaded>();
  loaded->library = std::move(library);
  return std::unique_ptr<Session>(new Session(std::move(loaded)));
}

Session::Session(std::unique_ptr<Loaded> loaded) : loaded_(std::move(loaded)) {}

Session::~Session() {
  // Nothing useful can be done if shutdown fails; the library is unloaded regardless.
  (void)loaded_->library->api().nvmlShutdown();
}

const std::string& Session::library_path() const {
  return loaded_->library->path();
}

std::string Session::bound_symbol(const std::string& name) const {
  return loaded_->library->bound_symbol(name);
}

Result<std::string> Session::driver_version() const {
  char buffer[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(loaded_->library->api(), nvmlSystemGetDriverVersion,
                                              buffer, sizeof buffer));
  return std::string(buffer);
}

Result<std::string> Session::nvml_version() const {
  char buffer[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(loaded_->library->api(), nvmlSystemGetNVMLVersion, buffer, sizeof buffer));
  return std::string(buffer);
}

Result<int> Session::cuda_driver_version() const {
  int version = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(loaded_->library->api(), nvmlSystemGetCudaDriverVersion_v2, &version));
  return version;
}

Result<unsigned> Session::device_count() const {
  unsigned count = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(loaded_->library->api(), nvmlDeviceGetCount_v2, &count));
  return count;
}

Result<Device> Session::device_by_index(unsigned index) const {
  GPUSCOPE_ASSIGN_OR_RETURN(unsigned count, device_count());
  if (index >= count) {
    return Status(Code::not_found,
                  fmt::format("there is no GPU {} (this machine has {} GPU{}: 0..{})", index, count,
                              count == 1 ? "" : "s", count == 0 ? 0 : count - 1));
  }
  nvmlDevice_t handle = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(loaded_->library->api(), nvmlDeviceGetHandleByIndex_v2, index, &handle));
  return Device(&loaded_->library->api(), handle, index);
}

Result<Device> Session::device_by_uuid(const std::string& uuid) const {
  const detail::Api& api = loaded_->library->api();
  nvmlDevice_t handle = nullptr;
  Status found = GPUSCOPE_NVML_CALL(api, nvmlDeviceGetHandleByUUID, uuid.c_str(), &handle);
  if (found.code() == Code::not_found || found.code() == Code::invalid_argument) {
    return Status(Code::not_found, fmt::format("there is no GPU with UUID {}", uuid));
  }
  GPUSCOPE_RETURN_IF_ERROR(found);
  unsigned index = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(api, nvmlDeviceGetIndex, handle, &index));
  return Device(&api, handle, index);
}

std::vector<std::string> clock_event_reason_names(std::uint64_t mask) {
  static constexpr std::pair<unsigned long long, const char*> kNames[] = {
      {nvmlClocksEventReasonGpuIdle, "gpu_idle"},
      {nvmlClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting"},
      {nvmlClocksEventReasonSwPowerCap, "sw_power_cap"},
      {nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown"},
      {nvmlClocksEventReasonSyncBoost, "sync_boost"},
      {nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
      {nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
      {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {nvmlClocksEventReasonDisplayClockSetting, "display_clock_setting"},
  };
  std::vector<std::string> names;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (mask & bit) names.emplace_back(name);
  }
  for (unsigned bit = 0; bit < 64; ++bit) {
    std::uint64_t value = std::uint64_t{1} << bit;
    if ((mask & value) && !(known & value)) names.push_back(fmt::format("bit_{}", bit));
  }
  return names;
}

}  // namespace gpuscope::nvml
