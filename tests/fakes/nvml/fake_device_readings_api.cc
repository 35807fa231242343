// Readings that follow the timeline: clocks, clock-event reasons, temperatures, PCIe,
// utilization, fans, processes.
#include <vector>

#include "api_call.h"
#include "power_model.h"

using gpuscope::fake_nvml::ApiCall;
using gpuscope::fake_nvml::write_reading;
using gpuscope::fake_nvml::write_value;

namespace {

nvmlReturn_t write_mask(const ApiCall& call, unsigned long long* out) {
  if (const auto modelled = gpuscope::fake_nvml::modelled_reading(call.state(), call.device_index(),
                                                                  "clock_event_reasons")) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *out = static_cast<unsigned long long>(*modelled);
    return NVML_SUCCESS;
  }
  const auto* reasons = call.reading("clock_event_reasons");
  if (reasons == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *out = static_cast<unsigned long long>(reasons->at(call.now()));
  return NVML_SUCCESS;
}

// A timeline reading that, when the timeline never gives it, falls back to a static value
// (the PCIe link drops to a lower generation at idle on consumer cards).
nvmlReturn_t write_reading_or(const ApiCall& call, std::string_view name,
                              const std::optional<unsigned>& fallback, unsigned* out) {
  if (call.reading(name) != nullptr) return write_reading(call, name, out);
  return write_value(fallback, out);
}

const std::vector<gpuscope::fake_nvml::Process>* processes_now(const ApiCall& call) {
  const auto& processes = call.device().timeline.processes;
  return processes.empty() ? nullptr : &processes.at(call.now());
}

}  // namespace

// Graphics falls back to the SM clock: on compute GPUs the two domains run together.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device,
                                                              nvmlClockType_t type,
                                                              unsigned int* clock) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  switch (type) {
    case NVML_CLOCK_SM:
      return write_reading(call, "sm_clock_mhz", clock);
    case NVML_CLOCK_MEM:
      return write_reading(call, "mem_clock_mhz", clock);
    case NVML_CLOCK_GRAPHICS:
      return write_reading(
          call, call.reading("graphics_clock_mhz") ? "graphics_clock_mhz" : "sm_clock_mhz", clock);
    case NVML_CLOCK_VIDEO:
      return write_reading(call, "video_clock_mhz", clock);
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device,
                                                                 nvmlClockType_t type,
                                                                 unsigned int* clock) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& max = call.device().max_clocks;
  switch (type) {
    case NVML_CLOCK_SM:
      return write_value(max.sm_mhz, clock);
    case NVML_CLOCK_MEM:
      return write_value(max.mem_mhz, clock);
    case NVML_CLOCK_GRAPHICS:
      return write_value(max.graphics_mhz ? max.graphics_mhz : max.sm_mhz, clock);
    case NVML_CLOCK_VIDEO:
      return write_value(max.video_mhz, clock);
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(
    nvmlDevice_t device, unsigned long long* clocksEventReasons) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_mask(call, clocksEventReasons);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(
    nvmlDevice_t device, unsigned long long* supportedClocksEventReasons) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& supported = call.device().supported_clock_event_reasons;
  if (!supported) return NVML_ERROR_NOT_SUPPORTED;
  if (supportedClocksEventReasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *supportedClocksEventReasons = *supported;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device,
                                                                 nvmlTemperature_t* temperature) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (temperature == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (temperature->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (temperature->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned celsius = 0;
  if (const nvmlReturn_t rc = write_reading(call, "gpu_temp_c", &celsius); rc != NVML_SUCCESS) {
    return rc;
  }
  temperature->temperature = static_cast<int>(celsius);
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                                nvmlTemperatureSensors_t sensorType,
                                                                unsigned int* temp) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return write_reading(call, "gpu_temp_c", temp);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(
    nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType, unsigned int* temp) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& thresholds = call.device().temperature_thresholds;
  switch (thresholdType) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
      return write_value(thresholds.shutdown_c, temp);
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
      return write_value(thresholds.slowdown_c, temp);
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
      return write_value(thresholds.mem_max_c, temp);
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
      return write_value(thresholds.gpu_max_c, temp);
    default:
      return thresholdType < NVML_TEMPERATURE_THRESHOLD_COUNT ? NVML_ERROR_NOT_SUPPORTED
                                                              : NVML_ERROR_INVALID_ARGUMENT;
  }
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* currLinkGen) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_reading_or(call, "pcie_gen", call.device().pcie.current_gen, currLinkGen);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGen) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_value(call.device().pcie.max_gen, maxLinkGen);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGenDevice) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_value(call.device().pcie.gpu_max_gen, maxLinkGenDevice);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device,
                                                                      unsigned int* currLinkWidth) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_reading_or(call, "pcie_width", call.device().pcie.current_width, currLinkWidth);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device,
                                                                     unsigned int* maxLinkWidth) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return write_value(call.device().pcie.max_width, maxLinkWidth);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device,
                                                                   nvmlPcieUtilCounter_t counter,
                                                                   unsigned int* value) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  switch (counter) {
    case NVML_PCIE_UTIL_TX_BYTES:
      return write_reading(call, "pcie_tx_kbps", value);
    case NVML_PCIE_UTIL_RX_BYTES:
      return write_reading(call, "pcie_rx_kbps", value);
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto* gpu = call.reading("gpu_util_percent");
  const auto* memory = call.reading("mem_util_percent");
  if (gpu == nullptr || memory == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  utilization->gpu = gpuscope::fake_nvml::reading_as_unsigned(gpu->at(call.now()));
  utilization->memory = gpuscope::fake_nvml::reading_as_unsigned(memory->at(call.now()));
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device,
                                                             unsigned int* speed) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (call.device().fan_count == 0) return NVML_ERROR_NOT_SUPPORTED;
  return write_reading(call, "fan_percent", speed);
}

// The documented protocol: *infoCount = 0 asks for the count (NVML_ERROR_INSUFFICIENT_SIZE, or
// NVML_SUCCESS when nothing runs).
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (infoCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto* processes = processes_now(call);
  const auto count = processes == nullptr ? 0U : static_cast<unsigned>(processes->size());
  if (*infoCount < count) {
    *infoCount = count;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (count > 0 && infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned i = 0; i < count; ++i) {
    const auto& process = (*processes)[i];
    infos[i] = nvmlProcessInfo_t{};
    infos[i].pid = process.pid;
    infos[i].usedGpuMemory = process.used_memory_bytes;
    infos[i].gpuInstanceId = 0xFFFFFFFFu;  // "not MIG", as the struct's comment says
    infos[i].computeInstanceId = 0xFFFFFFFFu;
  }
  *infoCount = count;
  return NVML_SUCCESS;
}

// One sample per process, stamped with the start of the timeline step in force: asking again
// with that stamp as lastSeenTimeStamp gives NVML_ERROR_NOT_FOUND until the next step, as the
// driver does between its sampling periods.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(
    nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
    unsigned int* processSamplesCount, unsigned long long lastSeenTimeStamp) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (processSamplesCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto* processes = processes_now(call);
  if (processes == nullptr || processes->empty()) return NVML_ERROR_NOT_FOUND;
  const unsigned long long stamp =
      gpuscope::fake_nvml::timestamp_us(call.device().timeline.processes.step_start(call.now()));
  if (stamp <= lastSeenTimeStamp) return NVML_ERROR_NOT_FOUND;
  const auto count = static_cast<unsigned>(processes->size());
  if (utilization == nullptr || *processSamplesCount < count) {
    *processSamplesCount = count;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < count; ++i) {
    utilization[i] = nvmlProcessUtilizationSample_t{};
    utilization[i].pid = (*processes)[i].pid;
    utilization[i].timeStamp = stamp;
    utilization[i].smUtil = (*processes)[i].sm_util;
    utilization[i].memUtil = (*processes)[i].mem_util;
  }
  *processSamplesCount = count;
  return NVML_SUCCESS;
}
