// The metric catalogue: one row per Metric, in enum order (checked at compile time).
//
// DCGM names and help texts are dcgm-exporter's (etc/default-counters.csv and
// dcp-metrics-included.csv), so Grafana dashboards written for it read ours unchanged; the
// scale turns our SI value into DCGM's unit. Metrics DCGM has no field for are exported as
// gpuscope_<name>, in our SI unit.
#include <algorithm>

#include "gpuscope/telemetry.h"

namespace gpuscope::telemetry {
namespace {

using enum Metric;
using K = MetricKind;
using A = Aggregation;
constexpr double kMiB = 1024.0 * 1024.0;

constexpr MetricInfo kCatalogue[] = {
    {sm_activity, "sm_activity", "1", K::gauge, A::interval,
     "Share of SM cycles with at least one warp assigned (GPM), 0..1", "DCGM_FI_PROF_SM_ACTIVE", 1,
     "The ratio of cycles an SM has at least 1 warp assigned (in %)."},
    {sm_occupancy, "sm_occupancy", "1", K::gauge, A::interval,
     "Resident warps as a share of the SMs' maximum (GPM), 0..1", "DCGM_FI_PROF_SM_OCCUPANCY", 1,
     "The ratio of number of warps resident on an SM (in %)."},
    {tensor_activity, "tensor_activity", "1", K::gauge, A::interval,
     "Share of cycles any tensor pipe was active (GPM), 0..1", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1,
     "Ratio of cycles the tensor (HMMA) pipe is active (in %)."},
    {dram_activity, "dram_activity", "1", K::gauge, A::interval,
     "Share of the peak DRAM bandwidth used (GPM), 0..1", "DCGM_FI_PROF_DRAM_ACTIVE", 1,
     "Ratio of cycles the device memory interface is active sending or receiving data (in %)."},
    {graphics_activity, "graphics_activity", "1", K::gauge, A::interval,
     "Share of time the graphics/compute engine was active (GPM), 0..1",
     "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1, "Ratio of time the graphics engine is active (in %)."},
    {fp64_activity, "fp64_activity", "1", K::gauge, A::interval,
     "Share of cycles the fp64 pipe was active (GPM), 0..1", "DCGM_FI_PROF_PIPE_FP64_ACTIVE", 1,
     "Ratio of cycles the fp64 pipes are active (in %)."},
    {fp32_activity, "fp32_activity", "1", K::gauge, A::interval,
     "Share of cycles the fp32 pipe was active (GPM), 0..1", "DCGM_FI_PROF_PIPE_FP32_ACTIVE", 1,
     "Ratio of cycles the fp32 pipes are active (in %)."},
    {fp16_activity, "fp16_activity", "1", K::gauge, A::interval,
     "Share of cycles the fp16 pipe was active (GPM), 0..1", "DCGM_FI_PROF_PIPE_FP16_ACTIVE", 1,
     "Ratio of cycles the fp16 pipes are active (in %)."},
    {gpu_utilization, "gpu_utilization", "1", K::gauge, A::interpolate,
     "NVML GPU utilization: a duty cycle (share of time one or more kernels ran), not how much "
     "of the GPU was busy, 0..1",
     "DCGM_FI_DEV_GPU_UTIL", 100, "GPU utilization (in %)."},
    {memory_utilization, "memory_utilization", "1", K::gauge, A::interpolate,
     "NVML memory utilization: a duty cycle (share of time device memory was read or written), "
     "0..1",
     "DCGM_FI_DEV_MEM_COPY_UTIL", 100, "Memory utilization (in %)."},
    {memory_used_bytes, "memory_used_bytes", "B", K::gauge, A::interpolate,
     "Device memory allocated", "DCGM_FI_DEV_FB_USED", 1 / kMiB,
     "Framebuffer memory used (in MiB)."},
    {memory_free_bytes, "memory_free_bytes", "B", K::gauge, A::interpolate, "Device memory free",
     "DCGM_FI_DEV_FB_FREE", 1 / kMiB, "Framebuffer memory free (in MiB)."},
    {memory_total_bytes, "memory_total_bytes", "B", K::gauge, A::interpolate,
     "Device memory in total", "DCGM_FI_DEV_FB_TOTAL", 1 / kMiB,
     "Total framebuffer memory (in MiB)."},
    {power_w, "power_w", "W", K::gauge, A::interpolate,
     "Power draw as nvidia-smi reports it (nvmlDeviceGetPowerUsage)", "DCGM_FI_DEV_POWER_USAGE", 1,
     "Power draw (in W)."},
    {power_instant_w, "power_instant_w", "W", K::gauge, A::interpolate,
     "Instantaneous power draw (NVML field POWER_INSTANT)", "DCGM_FI_DEV_POWER_USAGE_INSTANT", 1,
     "Current instantaneous power usage of the device in Watts."},
    {power_average_w, "power_average_w", "W", K::gauge, A::interpolate,
     "Power draw averaged over the last second (NVML field POWER_AVERAGE)", "", 1, ""},
    {power_limit_w, "power_limit_w", "W", K::gauge, A::interpolate, "Enforced power limit",
     "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", 1,
     "Effective power limit that the driver enforces (in W)."},
    {energy_j, "energy_j", "J", K::counter, A::interpolate,
     "Energy the GPU consumed since the driver loaded", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
     1000, "Total energy consumption since boot (in mJ)."},
    {temperature_c, "temperature_c", "degC", K::gauge, A::interpolate, "GPU core temperature",
     "DCGM_FI_DEV_GPU_TEMP", 1, "GPU temperature (in C)."},
    {memory_temperature_c, "memory_temperature_c", "degC", K::gauge, A::interpolate,
     "Device memory temperature", "DCGM_FI_DEV_MEMORY_TEMP", 1, "Memory temperature (in C)."},
    {sm_clock_hz, "sm_clock_hz", "Hz", K::gauge, A::interpolate, "SM clock", "DCGM_FI_DEV_SM_CLOCK",
     1e-6, "SM clock frequency (in MHz)."},
    {memory_clock_hz, "memory_clock_hz", "Hz", K::gauge, A::interpolate, "Memory clock",
     "DCGM_FI_DEV_MEM_CLOCK", 1e-6, "Memory clock frequency (in MHz)."},
    {clock_event_reasons, "clock_event_reasons", "mask", K::gauge, A::hold,
     "Clock-event (throttle) reasons in force, NVML bit mask", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
     1, "Current clock throttle reasons (bitmask)."},
    {throttle_sw_power_cap_s, "throttle_sw_power_cap_s", "s", K::counter, A::interpolate,
     "Time the software power cap held the clocks down since the driver loaded",
     "DCGM_FI_DEV_POWER_VIOLATION", 1e6, "Throttling duration due to power constraints (in us)."},
    {throttle_sw_thermal_s, "throttle_sw_thermal_s", "s", K::counter, A::interpolate,
     "Time software thermal slowdown held the clocks down since the driver loaded",
     "DCGM_FI_DEV_THERMAL_VIOLATION", 1e6,
     "Throttling duration due to thermal constraints (in us)."},
    {throttle_hw_thermal_s, "throttle_hw_thermal_s", "s", K::counter, A::interpolate,
     "Time hardware thermal slowdown held the clocks down since the driver loaded", "", 1, ""},
    {throttle_hw_power_brake_s, "throttle_hw_power_brake_s", "s", K::counter, A::interpolate,
     "Time the hardware power brake held the clocks down since the driver loaded", "", 1, ""},
    {pcie_tx_bytes_per_s, "pcie_tx_bytes_per_s", "B/s", K::gauge, A::interpolate,
     "PCIe traffic out of the GPU", "DCGM_FI_PROF_PCIE_TX_BYTES", 1,
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second."},
    {pcie_rx_bytes_per_s, "pcie_rx_bytes_per_s", "B/s", K::gauge, A::interpolate,
     "PCIe traffic into the GPU", "DCGM_FI_PROF_PCIE_RX_BYTES", 1,
     "The rate of data received over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second."},
    {nvlink_tx_bytes, "nvlink_tx_bytes", "B", K::counter, A::interpolate,
     "NVLink data sent, all links, since the driver loaded", "", 1, ""},
    {nvlink_rx_bytes, "nvlink_rx_bytes", "B", K::counter, A::interpolate,
     "NVLink data received, all links, since the driver loaded", "", 1, ""},
    {nvlink_tx_bytes_per_s, "nvlink_tx_bytes_per_s", "B/s", K::gauge, A::interpolate,
     "NVLink data sent per second, all links", "DCGM_FI_PROF_NVLINK_TX_BYTES", 1,
     "The rate of data transmitted over NVLink, not including protocol headers, in bytes per "
     "second."},
    {nvlink_rx_bytes_per_s, "nvlink_rx_bytes_per_s", "B/s", K::gauge, A::interpolate,
     "NVLink data received per second, all links", "DCGM_FI_PROF_NVLINK_RX_BYTES", 1,
     "The rate of data received over NVLink, not including protocol headers, in bytes per "
     "second."},
    {fan_speed, "fan_speed", "1", K::gauge, A::interpolate, "Fan speed (target), 0..1",
     "DCGM_FI_DEV_FAN_SPEED", 100, "Fan speed for the device in percent 0-100."},
    {ecc_corrected_errors, "ecc_corrected_errors", "count", K::counter, A::interpolate,
     "Corrected (single-bit) ECC errors since the driver loaded", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
     1, "Total number of single-bit volatile ECC errors."},
    {ecc_uncorrected_errors, "ecc_uncorrected_errors", "count", K::counter, A::interpolate,
     "Uncorrected (double-bit) ECC errors since the driver loaded", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
     1, "Total number of double-bit volatile ECC errors."},
};
static_assert(std::size(kCatalogue) == kMetricCount, "one catalogue row per Metric");

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kCatalogue); ++i) {
    if (static_cast<std::size_t>(kCatalogue[i].metric) != i) return false;
  }
  return true;
}
static_assert(in_enum_order(), "catalogue rows must follow the Metric enum");

}  // namespace

std::span<const MetricInfo> metric_catalogue() {
  return kCatalogue;
}

const MetricInfo& metric_info(Metric metric) {
  return kCatalogue[static_cast<std::size_t>(metric)];
}

std::optional<Metric> metric_by_name(std::string_view name) {
  const auto* it = std::find_if(std::begin(kCatalogue), std::end(kCatalogue),
                                [name](const MetricInfo& info) { return info.name == name; });
  if (it == std::end(kCatalogue)) return std::nullopt;
  return it->metric;
}

std::optional<Metric> throttle_metric(nvml::ThrottleReason reason) {
  switch (reason) {
    case nvml::ThrottleReason::sw_power_cap:
      return Metric::throttle_sw_power_cap_s;
    case nvml::ThrottleReason::sw_thermal:
      return Metric::throttle_sw_thermal_s;
    case nvml::ThrottleReason::hw_thermal:
      return Metric::throttle_hw_thermal_s;
    case nvml::ThrottleReason::hw_power_brake:
      return Metric::throttle_hw_power_brake_s;
    case nvml::ThrottleReason::hw_slowdown:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace gpuscope::telemetry
