// Device readings. Each getter is one NVML call (or a short fallback chain from the newest
// API to the oldest) with its unit converted to SI.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuscope/nvml.h"
#include "nvml/nvml_api.h"
#include "nvml/nvml_error.h"
#include "nvml/nvml_field_value.h"

namespace gpuscope::nvml {
namespace {

nvmlClockType_t to_nvml(ClockDomain domain) {
  switch (domain) {
    case ClockDomain::sm:
      return NVML_CLOCK_SM;
    case ClockDomain::memory:
      return NVML_CLOCK_MEM;
    case ClockDomain::graphics:
      return NVML_CLOCK_GRAPHICS;
  }
  return NVML_CLOCK_SM;
}

nvmlTemperatureThresholds_t to_nvml(TemperatureThreshold which) {
  switch (which) {
    case TemperatureThreshold::slowdown:
      return NVML_TEMPERATURE_THRESHOLD_SLOWDOWN;
    case TemperatureThreshold::shutdown:
      return NVML_TEMPERATURE_THRESHOLD_SHUTDOWN;
    case TemperatureThreshold::gpu_max:
      return NVML_TEMPERATURE_THRESHOLD_GPU_MAX;
    case TemperatureThreshold::memory_max:
      return NVML_TEMPERATURE_THRESHOLD_MEM_MAX;
  }
  return NVML_TEMPERATURE_THRESHOLD_SLOWDOWN;
}

double milliwatts_to_watts(unsigned mw) {
  return static_cast<double>(mw) / 1000.0;
}

// Falls through to the next API only when the newer one is absent or unknown to the driver.
bool try_older_api(const Status& status) {
  return status.code() == Code::not_supported;
}

}  // namespace

Result<std::string> Device::name() const {
  char buffer[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetName, handle_, buffer, sizeof buffer));
  return std::string(buffer);
}

Result<std::string> Device::uuid() const {
  char buffer[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetUUID, handle_, buffer, sizeof buffer));
  return std::string(buffer);
}

Result<PciInfo> Device::pci() const {
  nvmlPciInfo_t info{};
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetPciInfo_v3, handle_, &info));
  return PciInfo{info.busId, info.pciDeviceId, info.pciSubSystemId};
}

std::string GpuLink::label() const {
  if (nvlinks > 0) return fmt::format("NV{}", nvlinks);
  if (pcie_path) return "PCIe " + *pcie_path;
  return "unknown";
}

Result<GpuLink> Device::link_to(const Device& other) const {
  GpuLink link;
  bool known = false;
  nvmlGpuTopologyLevel_t level{};
  if (GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetTopologyCommonAncestor, handle_, other.handle_, &level)
          .ok()) {
    known = true;
    switch (level) {
      case NVML_TOPOLOGY_INTERNAL:
        link.pcie_path = "same board";
        break;
      case NVML_TOPOLOGY_SINGLE:
        link.pcie_path = "PIX";
        break;
      case NVML_TOPOLOGY_MULTIPLE:
        link.pcie_path = "PXB";
        break;
      case NVML_TOPOLOGY_HOSTBRIDGE:
        link.pcie_path = "PHB";
        break;
      case NVML_TOPOLOGY_NODE:
        link.pcie_path = "NODE";
        break;
      default:
        link.pcie_path = "SYS";
        break;
    }
  }
  const Result<PciInfo> far = other.pci();
  unsigned active_links = 0;
  for (unsigned i = 0; far.ok() && i < NVML_NVLINK_MAX_LINKS; ++i) {
    nvmlEnableState_t active{};
    if (!GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetNvLinkState, handle_, i, &active).ok()) break;
    if (active != NVML_FEATURE_ENABLED) continue;
    ++active_links;
    nvmlPciInfo_t remote{};
    if (!GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetNvLinkRemotePciInfo_v2, handle_, i, &remote).ok()) {
      continue;
    }
    known = true;
    if (std::string_view(remote.busId) == far->bus_id) ++link.nvlinks;
  }
  // No link ends at the other GPU, yet NVLink joins them: through NVSwitches (the H100s of an
  // HGX board: NV18 in nvidia-smi, every link's far end a switch).
  nvmlGpuP2PStatus_t p2p{};
  if (link.nvlinks == 0 && active_links > 0 &&
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetP2PStatus, handle_, other.handle_,
                         NVML_P2P_CAPS_INDEX_NVLINK, &p2p)
          .ok() &&
      p2p == NVML_P2P_STATUS_OK) {
    known = true;
    link.nvlinks = active_links;
    link.through_switch = true;
  }
  if (!known) {
    return Status(Code::not_supported, "NVML tells neither the PCIe path nor the NVLinks");
  }
  return link;
}

Result<std::pair<int, int>> Device::cuda_compute_capability() const {
  int major = 0, minor = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetCudaComputeCapability, handle_, &major, &minor));
  return std::pair{major, minor};
}

Result<MemoryInfo> Device::memory() const {
  nvmlMemory_v2_t v2{};
  v2.version = nvmlMemory_v2;
  Status status = GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMemoryInfo_v2, handle_, &v2);
  if (status.ok()) return MemoryInfo{v2.total, v2.used, v2.free, v2.reserved};
  if (!try_older_api(status)) return status;
  nvmlMemory_t v1{};
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMemoryInfo, handle_, &v1));
  return MemoryInfo{v1.total, v1.used, v1.free, std::nullopt};
}

Result<unsigned> Device::memory_bus_width_bits() const {
  unsigned width = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMemoryBusWidth, handle_, &width));
  return width;
}

Result<unsigned> Device::clock_mhz(ClockDomain domain) const {
  unsigned mhz = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetClockInfo, handle_, to_nvml(domain), &mhz));
  return mhz;
}

Result<unsigned> Device::max_clock_mhz(ClockDomain domain) const {
  unsigned mhz = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMaxClockInfo, handle_, to_nvml(domain), &mhz));
  return mhz;
}

Result<std::uint64_t> Device::clock_event_reasons() const {
  unsigned long long mask = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetCurrentClocksEventReasons, handle_, &mask));
  return static_cast<std::uint64_t>(mask);
}

Result<std::uint64_t> Device::supported_clock_event_reasons() const {
  unsigned long long mask = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetSupportedClocksEventReasons, handle_, &mask));
  return static_cast<std::uint64_t>(mask);
}

Result<double> Device::power_w() const {
  unsigned mw = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetPowerUsage, handle_, &mw));
  return milliwatts_to_watts(mw);
}

Result<double> Device::power_limit_w() const {
  unsigned mw = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetPowerManagementLimit, handle_, &mw));
  return milliwatts_to_watts(mw);
}

Result<double> Device::default_power_limit_w() const {
  unsigned mw = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetPowerManagementDefaultLimit, handle_, &mw));
  return milliwatts_to_watts(mw);
}

Result<double> Device::enforced_power_limit_w() const {
  unsigned mw = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetEnforcedPowerLimit, handle_, &mw));
  return milliwatts_to_watts(mw);
}

Result<std::pair<double, double>> Device::power_limit_range_w() const {
  unsigned min_mw = 0, max_mw = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetPowerManagementLimitConstraints,
                                              handle_, &min_mw, &max_mw));
  return std::pair{milliwatts_to_watts(min_mw), milliwatts_to_watts(max_mw)};
}

Result<double> Device::total_energy_j() const {
  unsigned long long mj = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetTotalEnergyConsumption, handle_, &mj));
  return static_cast<double>(mj) / 1000.0;
}

Status Device::set_power_limit_w(double watts) const {
  if (!(watts > 0)) return Status(Code::invalid_argument, "a power limit must be positive");
  const auto mw = static_cast<unsigned>(std::llround(watts * 1000.0));
  return GPUSCOPE_NVML_CALL(*api_, nvmlDeviceSetPowerManagementLimit, handle_, mw);
}

namespace {

// A list of clocks NVML fills, high to low, retried with the size NVML asks for.
template <class Fill>
Result<std::vector<unsigned>> clock_list(const char* function, Fill fill) {
  std::vector<unsigned> clocks(256);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto count = static_cast<unsigned>(clocks.size());
    const nvmlReturn_t rc = fill(&count, clocks.data());
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE && count > clocks.size()) {
      clocks.resize(count);
      continue;
    }
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(rc));
    clocks.resize(std::min<std::size_t>(count, clocks.size()));
    if (clocks.empty()) return Status(Code::not_supported, fmt::format("{}: none", function));
    std::sort(clocks.rbegin(), clocks.rend());
    return clocks;
  }
  return Status(Code::internal, fmt::format("{}: the list kept growing", function));
}

}  // namespace

Result<std::vector<unsigned>> Device::supported_sm_clocks_mhz() const {
  if (api_->nvmlDeviceGetSupportedMemoryClocks == nullptr ||
      api_->nvmlDeviceGetSupportedGraphicsClocks == nullptr) {
    return Status(Code::not_supported,
                  "nvmlDeviceGetSupportedGraphicsClocks is not exported by this NVML library");
  }
  GPUSCOPE_ASSIGN_OR_RETURN(
      std::vector<unsigned> memory,
      clock_list("nvmlDeviceGetSupportedMemoryClocks", [&](unsigned* count, unsigned* clocks) {
        return api_->nvmlDeviceGetSupportedMemoryClocks(handle_, count, clocks);
      }));
  return clock_list("nvmlDeviceGetSupportedGraphicsClocks", [&](unsigned* count, unsigned* clocks) {
    return api_->nvmlDeviceGetSupportedGraphicsClocks(handle_, memory.front(), count, clocks);
  });
}

Status Device::set_locked_sm_clocks_mhz(unsigned min_mhz, unsigned max_mhz) const {
  if (min_mhz == 0 || min_mhz > max_mhz) {
    return Status(Code::invalid_argument,
                  fmt::format("no SM clock range {}-{} MHz", min_mhz, max_mhz));
  }
  return GPUSCOPE_NVML_CALL(*api_, nvmlDeviceSetGpuLockedClocks, handle_, min_mhz, max_mhz);
}

Status Device::reset_locked_sm_clocks() const {
  return GPUSCOPE_NVML_CALL(*api_, nvmlDeviceResetGpuLockedClocks, handle_);
}

Result<double> Device::temperature_c() const {
  nvmlTemperature_t reading{};
  reading.version = nvmlTemperature_v1;
  reading.sensorType = NVML_TEMPERATURE_GPU;
  Status status = GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetTemperatureV, handle_, &reading);
  if (status.ok()) return static_cast<double>(reading.temperature);
  if (!try_older_api(status)) return status;
  unsigned celsius = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetTemperature, handle_, NVML_TEMPERATURE_GPU, &celsius));
  return static_cast<double>(celsius);
}

Result<double> Device::memory_temperature_c() const {
  nvmlFieldValue_t value{};
  value.fieldId = NVML_FI_DEV_MEMORY_TEMP;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetFieldValues, handle_, 1, &value));
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(value.nvmlReturn));
  if (auto celsius = detail::field_as_double(value)) return *celsius;
  return Status(Code::internal, fmt::format("memory temperature has an unexpected value type {}",
                                            static_cast<int>(value.valueType)));
}

Result<double> Device::temperature_threshold_c(TemperatureThreshold which) const {
  unsigned celsius = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetTemperatureThreshold, handle_,
                                              to_nvml(which), &celsius));
  return static_cast<double>(celsius);
}

Result<unsigned> Device::pcie_generation(LinkValue which) const {
  unsigned gen = 0;
  switch (which) {
    case LinkValue::current:
      GPUSCOPE_RETURN_IF_ERROR(
          GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetCurrPcieLinkGeneration, handle_, &gen));
      break;
    case LinkValue::max:
      GPUSCOPE_RETURN_IF_ERROR(
          GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMaxPcieLinkGeneration, handle_, &gen));
      break;
    case LinkValue::gpu_max:
      GPUSCOPE_RETURN_IF_ERROR(
          GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetGpuMaxPcieLinkGeneration, handle_, &gen));
      break;
  }
  return gen;
}

Result<unsigned> Device::pcie_width(LinkValue which) const {
  unsigned width = 0;
  if (which == LinkValue::current) {
    GPUSCOPE_RETURN_IF_ERROR(
        GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetCurrPcieLinkWidth, handle_, &width));
  } else {
    GPUSCOPE_RETURN_IF_ERROR(
        GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMaxPcieLinkWidth, handle_, &width));
  }
  return width;
}

Result<bool> Device::persistence_mode() const {
  nvmlEnableState_t mode = NVML_FEATURE_DISABLED;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetPersistenceMode, handle_, &mode));
  return mode == NVML_FEATURE_ENABLED;
}

Result<ComputeMode> Device::compute_mode() const {
  nvmlComputeMode_t mode = NVML_COMPUTEMODE_DEFAULT;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetComputeMode, handle_, &mode));
  switch (mode) {
    case NVML_COMPUTEMODE_DEFAULT:
      return ComputeMode::default_mode;
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
      return ComputeMode::exclusive_thread;
    case NVML_COMPUTEMODE_PROHIBITED:
      return ComputeMode::prohibited;
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
      return ComputeMode::exclusive_process;
    default:
      return Status(Code::internal, "unknown compute mode");
  }
}

Result<EnabledState> Device::ecc_mode() const {
  nvmlEnableState_t current = NVML_FEATURE_DISABLED, pending = NVML_FEATURE_DISABLED;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetEccMode, handle_, &current, &pending));
  return EnabledState{current == NVML_FEATURE_ENABLED, pending == NVML_FEATURE_ENABLED};
}

Result<bool> Device::gpm_supported() const {
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlGpmQueryDeviceSupport, handle_, &support));
  return support.isSupportedDevice != 0;
}

Result<EnabledState> Device::mig_mode() const {
  unsigned current = 0, pending = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMigMode, handle_, &current, &pending));
  return EnabledState{current == NVML_DEVICE_MIG_ENABLE, pending == NVML_DEVICE_MIG_ENABLE};
}

Result<std::vector<MigDevice>> Device::mig_devices() const {
  GPUSCOPE_ASSIGN_OR_RETURN(EnabledState mode, mig_mode());
  std::vector<MigDevice> devices;
  if (!mode.current) return devices;
  unsigned slots = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMaxMigDeviceCount, handle_, &slots));
  for (unsigned slot = 0; slot < slots; ++slot) {
    nvmlDevice_t mig = nullptr;
    Status got =
        GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetMigDeviceHandleByIndex, handle_, slot, &mig);
    if (got.code() == Code::not_found || got.code() == Code::invalid_argument) continue;  // empty
    GPUSCOPE_RETURN_IF_ERROR(got);

    Device child(api_, mig, index_);
    MigDevice entry;
    GPUSCOPE_RETURN_IF_ERROR(
        GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetGpuInstanceId, mig, &entry.gpu_instance_id));
    GPUSCOPE_RETURN_IF_ERROR(
        GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetComputeInstanceId, mig, &entry.compute_instance_id));
    GPUSCOPE_ASSIGN_OR_RETURN(entry.name, child.name());
    GPUSCOPE_ASSIGN_OR_RETURN(entry.uuid, child.uuid());
    if (auto memory = child.memory(); memory.ok()) entry.memory_total_bytes = memory->total_bytes;
    nvmlDeviceAttributes_t attributes{};
    if (GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetAttributes_v2, mig, &attributes).ok()) {
      entry.sm_count = attributes.multiprocessorCount;
    }
    devices.push_back(std::move(entry));
  }
  return devices;
}

}  // namespace gpuscope::nvml
