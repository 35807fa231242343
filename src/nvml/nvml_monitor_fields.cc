// Readings the monitor samples that `info` does not need: utilization duty cycles, fan, PCIe
// traffic, ECC counts, the power/NVLink/memory-temperature field values, and the processes on
// a GPU. Each is one NVML call (the process list: two, to learn the count first).
#include <algorithm>
#include <climits>
#include <vector>

#include "gpuscope/nvml.h"
#include "nvml/nvml_api.h"
#include "nvml/nvml_error.h"
#include "nvml/nvml_field_value.h"

namespace gpuscope::nvml {
namespace {

using detail::field_as_double;
using detail::field_as_u64;

std::optional<double> milliwatts(const nvmlFieldValue_t& value) {
  std::optional<double> mw = field_as_double(value);
  if (!mw) return std::nullopt;
  return *mw / 1000.0;
}

}  // namespace

Result<Utilization> Device::utilization() const {
  nvmlUtilization_t rates{};
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetUtilizationRates, handle_, &rates));
  return Utilization{rates.gpu / 100.0, rates.memory / 100.0};
}

Result<double> Device::fan_speed_fraction() const {
  unsigned percent = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetFanSpeed, handle_, &percent));
  return percent / 100.0;
}

Result<std::pair<double, double>> Device::pcie_throughput_bytes_per_s() const {
  unsigned tx_kb = 0, rx_kb = 0;  // NVML's unit is KB/s
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetPcieThroughput, handle_,
                                              NVML_PCIE_UTIL_TX_BYTES, &tx_kb));
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetPcieThroughput, handle_,
                                              NVML_PCIE_UTIL_RX_BYTES, &rx_kb));
  return std::pair{tx_kb * 1000.0, rx_kb * 1000.0};
}

Result<std::uint64_t> Device::ecc_errors(EccErrorType type) const {
  unsigned long long count = 0;
  const nvmlMemoryErrorType_t nvml_type = type == EccErrorType::corrected
                                              ? NVML_MEMORY_ERROR_TYPE_CORRECTED
                                              : NVML_MEMORY_ERROR_TYPE_UNCORRECTED;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetTotalEccErrors, handle_,
                                              nvml_type, NVML_VOLATILE_ECC, &count));
  return static_cast<std::uint64_t>(count);
}

Result<MonitorFields> Device::monitor_fields() const {
  enum { kInstant, kAverage, kMemoryTemp, kNvlinkTx, kNvlinkRx, kCount };
  nvmlFieldValue_t values[kCount] = {};
  values[kInstant].fieldId = NVML_FI_DEV_POWER_INSTANT;
  values[kInstant].scopeId = NVML_POWER_SCOPE_GPU;
  values[kAverage].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  values[kAverage].scopeId = NVML_POWER_SCOPE_GPU;
  values[kMemoryTemp].fieldId = NVML_FI_DEV_MEMORY_TEMP;
  values[kNvlinkTx].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
  values[kNvlinkTx].scopeId = UINT_MAX;  // every link together
  values[kNvlinkRx].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
  values[kNvlinkRx].scopeId = UINT_MAX;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetFieldValues, handle_, kCount, values));
  MonitorFields fields;
  fields.power_instant_w = milliwatts(values[kInstant]);
  fields.power_average_w = milliwatts(values[kAverage]);
  fields.memory_temperature_c = field_as_double(values[kMemoryTemp]);
  // NVML counts NVLink data in KiB.
  if (auto kib = field_as_u64(values[kNvlinkTx])) fields.nvlink_tx_bytes = *kib * 1024;
  if (auto kib = field_as_u64(values[kNvlinkRx])) fields.nvlink_rx_bytes = *kib * 1024;
  return fields;
}

Result<std::vector<GpuProcess>> Device::compute_processes() const {
  if (api_->nvmlDeviceGetComputeRunningProcesses_v3 == nullptr) {
    return Status(Code::not_supported, "nvmlDeviceGetComputeRunningProcesses_v3 is not exported");
  }
  // The list can grow between asking for its size and reading it: retry with more room.
  std::vector<nvmlProcessInfo_t> infos;
  unsigned count = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    infos.resize(count);
    nvmlReturn_t rc = api_->nvmlDeviceGetComputeRunningProcesses_v3(
        handle_, &count, infos.empty() ? nullptr : infos.data());
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      count += 4;  // room for processes that start meanwhile
      continue;
    }
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(rc));
    infos.resize(std::min<std::size_t>(count, infos.size()));
    std::vector<GpuProcess> processes;
    processes.reserve(infos.size());
    for (const nvmlProcessInfo_t& info : infos) {
      GpuProcess p;
      p.pid = info.pid;
      if (info.usedGpuMemory != static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE))
        p.used_memory_bytes = info.usedGpuMemory;
      processes.push_back(p);
    }
    return processes;
  }
  return Status(Code::internal, "nvmlDeviceGetComputeRunningProcesses_v3: the list kept growing");
}

Result<std::vector<ProcessUtilization>> Device::process_utilization(std::uint64_t since_us) const {
  if (api_->nvmlDeviceGetProcessUtilization == nullptr) {
    return Status(Code::not_supported, "nvmlDeviceGetProcessUtilization is not exported");
  }
  std::vector<ProcessUtilization> out;
  std::vector<nvmlProcessUtilizationSample_t> samples;
  unsigned count = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    samples.resize(count);
    nvmlReturn_t rc = api_->nvmlDeviceGetProcessUtilization(
        handle_, samples.empty() ? nullptr : samples.data(), &count, since_us);
    // NOT_FOUND: no sample newer than since_us (nothing ran, or nothing new): not a failure.
    if (rc == NVML_ERROR_NOT_FOUND) return out;
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE ||
        (rc == NVML_SUCCESS && samples.empty() && count > 0)) {
      count += 4;
      continue;
    }
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(rc));
    for (unsigned i = 0; i < count && i < samples.size(); ++i) {
      out.push_back({samples[i].pid, samples[i].timeStamp, samples[i].smUtil / 100.0,
                     samples[i].memUtil / 100.0});
    }
    return out;
  }
  return Status(Code::internal, "nvmlDeviceGetProcessUtilization: the list kept growing");
}

}  // namespace gpuscope::nvml
