// The NVML adapter: the only code in gpuscope that talks to NVIDIA's management library.
//
// NVML is loaded with dlopen at run time, so gpuscope starts (and says something useful) on a
// machine without a driver. Every reading returns Result<T>: Code::not_supported means this
// GPU or driver does not report it (the data is absent, never 0); other codes are real
// failures (permission_denied, gpu_lost, ...), with NVML's own error string in the message.
//
// Tests swap the library for the fake in tests/fakes/nvml through LoadOptions (or the
// GPUSCOPE_NVML_LIBRARY environment variable); callers never know which one they talk to.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscope/status.h"

struct nvmlDevice_st;     // NVML's opaque handle type (from nvml.h, which stays private)
struct nvmlGpmSample_st;  // NVML's opaque GPM sample buffer

namespace gpuscope::nvml {

namespace detail {
struct Api;
}

struct LoadOptions {
  // Libraries tried in order; the first that loads wins. Empty: $GPUSCOPE_NVML_LIBRARY if set,
  // else "libnvidia-ml.so.1", then "libnvidia-ml.so".
  std::vector<std::string> library_candidates;
};

enum class ClockDomain { sm, memory, graphics };
enum class TemperatureThreshold { slowdown, shutdown, gpu_max, memory_max };
enum class LinkValue { current, max, gpu_max };  // max = min(GPU, system); gpu_max = GPU alone

struct MemoryInfo {
  std::uint64_t total_bytes = 0;
  std::uint64_t used_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::optional<std::uint64_t> reserved_bytes;  // only with nvmlDeviceGetMemoryInfo_v2
};

struct PciInfo {
  std::string bus_id;  // "00000000:18:00.0", as nvidia-smi prints it
  std::uint32_t device_id = 0;
  std::uint32_t subsystem_id = 0;
};

// How two GPUs are joined, as `nvidia-smi topo -m` says it.
struct GpuLink {
  // Active NVLinks from the first GPU whose far end is the second; through NVSwitches (HGX
  // boards: every link ends at a switch), all the first GPU's active links, as nvidia-smi
  // counts them.
  unsigned nvlinks = 0;
  bool through_switch = false;
  // The PCIe path: "same board", "PIX", "PXB", "PHB", "NODE" or "SYS" (nvidia-smi's words);
  // absent where NVML does not tell.
  std::optional<std::string> pcie_path;
  // "NV18", "PCIe PHB", or "unknown".
  std::string label() const;
};

struct EnabledState {
  bool current = false;
  bool pending = false;  // takes effect after the next GPU reset / reboot
};

enum class ComputeMode { default_mode, exclusive_thread, prohibited, exclusive_process };

// The clock-event (throttle) reasons whose time burn reports. hw_slowdown has no time counter in
// NVML; its time can only be estimated from sampled clock_event_reasons() masks.
enum class ThrottleReason { sw_power_cap, hw_slowdown, sw_thermal, hw_thermal, hw_power_brake };
inline constexpr std::array<ThrottleReason, 5> kThrottleReasons = {
    ThrottleReason::sw_power_cap, ThrottleReason::hw_slowdown, ThrottleReason::sw_thermal,
    ThrottleReason::hw_thermal, ThrottleReason::hw_power_brake};

// The name clock_event_reason_names() gives the reason's bit ("sw_power_cap",
// "hw_thermal_slowdown", ...).
std::string_view throttle_reason_name(ThrottleReason reason);
// The reason's bit in a clock_event_reasons() mask.
std::uint64_t throttle_reason_bit(ThrottleReason reason);

// GPM metrics between two samples (Hopper and newer). Activities are fractions 0..1.
struct GpmMetrics {
  double interval_seconds = 0;            // between the two samples
  std::optional<double> sm_activity;      // share of SMs busy (NVML_GPM_METRIC_SM_UTIL)
  std::optional<double> tensor_activity;  // share of time any tensor pipe was busy
  std::optional<double> dram_activity;    // share of the peak DRAM bandwidth used
  // Added for the monitor (same request, so no extra NVML call):
  std::optional<double> graphics_activity;    // graphics engine busy (DCGM GR_ENGINE_ACTIVE)
  std::optional<double> sm_occupancy;         // resident warps / the SMs' maximum
  std::optional<double> fp64_activity;        // share of time the fp64 pipe was busy
  std::optional<double> fp32_activity;        // ... the fp32 pipe
  std::optional<double> fp16_activity;        // ... the fp16 pipe
  std::optional<double> pcie_tx_bytes_per_s;  // the GPU's PCIe traffic out, mean over the pair
  std::optional<double> pcie_rx_bytes_per_s;  // ... and in
};

// NVML's "utilization" (nvmlDeviceGetUtilizationRates). Both are duty cycles over the driver's
// last sample period (1/6 s to 1 s): the share of time one or more kernels ran (gpu), or device
// memory was read or written (memory). One busy SM reads as 100%; SM and tensor activity (GPM)
// say how much of the GPU was used. Fractions 0..1.
struct Utilization {
  double gpu = 0;
  double memory = 0;
};

// The field values the monitor reads each sample, from one nvmlDeviceGetFieldValues call; each
// is absent when this GPU/driver does not report it.
struct MonitorFields {
  std::optional<double> power_instant_w;         // NVML_FI_DEV_POWER_INSTANT (GPU scope)
  std::optional<double> power_average_w;         // NVML_FI_DEV_POWER_AVERAGE: over the last 1 s
  std::optional<double> memory_temperature_c;    // NVML_FI_DEV_MEMORY_TEMP
  std::optional<std::uint64_t> nvlink_tx_bytes;  // all links, since the driver loaded
  std::optional<std::uint64_t> nvlink_rx_bytes;
};

// A process with a CUDA context on a GPU (nvmlDeviceGetComputeRunningProcesses_v3).
struct GpuProcess {
  unsigned pid = 0;                                // in the driver's PID namespace
  std::optional<std::uint64_t> used_memory_bytes;  // absent where NVML cannot tell (Windows WDDM)
};

// A process's share of the GPU over the driver's last sample period
// (nvmlDeviceGetProcessUtilization); fractions 0..1, duty cycles like Utilization.
struct ProcessUtilization {
  unsigned pid = 0;
  std::uint64_t timestamp_us = 0;  // the driver's stamp, microseconds since 1970
  double sm = 0;
  double memory = 0;
};

enum class EccErrorType { corrected, uncorrected };

// One MIG device: a compute instance inside a GPU instance.
struct MigDevice {
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  std::string name;  // "NVIDIA A100-SXM4-40GB MIG 3g.20gb"
  std::string uuid;  // "MIG-...": usable in CUDA_VISIBLE_DEVICES
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<unsigned> sm_count;
};

// A GPU handle. Cheap to copy; valid while the Session that made it lives.
class Device {
 public:
  unsigned index() const { return index_; }

  Result<std::string> name() const;
  Result<std::string> uuid() const;
  Result<PciInfo> pci() const;
  // How this GPU is joined to `other` (NVLinks counted from this side). not_supported when
  // NVML tells neither the PCIe path nor any NVLink's far end.
  Result<GpuLink> link_to(const Device& other) const;
  Result<std::pair<int, int>> cuda_compute_capability() const;
  Result<MemoryInfo> memory() const;
  Result<unsigned> memory_bus_width_bits() const;

  Result<unsigned> clock_mhz(ClockDomain domain) const;
  Result<unsigned> max_clock_mhz(ClockDomain domain) const;
  // Bitmask of NVML clock-event (throttle) reasons; decode with clock_event_reason_names().
  Result<std::uint64_t> clock_event_reasons() const;
  Result<std::uint64_t> supported_clock_event_reasons() const;

  Result<double> power_w() const;
  Result<double> power_limit_w() const;
  Result<double> default_power_limit_w() const;
  Result<double> enforced_power_limit_w() const;
  Result<std::pair<double, double>> power_limit_range_w() const;  // {min, max}
  Result<double> total_energy_j() const;                          // since the driver was loaded
  // Sets the power limit (nvmlDeviceSetPowerManagementLimit; rounded to whole milliwatts). Only
  // the sweep calls it, behind --allow-power-changes. Fails with permission_denied without root
  // or CAP_SYS_ADMIN, invalid_argument outside power_limit_range_w(), not_supported where the
  // GPU's limit cannot be set (or the library lacks the function), gpu_lost.
  Status set_power_limit_w(double watts) const;

  // The SM (graphics) clocks a lock may name, in MHz, high to low: those the driver lists for
  // the highest supported memory clock (nvmlDeviceGetSupportedGraphicsClocks). not_supported
  // where the GPU or library has no list (before Volta).
  Result<std::vector<unsigned>> supported_sm_clocks_mhz() const;
  // Locks the SM clock into [min_mhz, max_mhz] (nvmlDeviceSetGpuLockedClocks; min = max pins
  // it, as `nvidia-smi -lgc C` does). A power or thermal limit may still hold it lower. Only
  // the sweep calls it, behind --allow-power-changes. Fails like set_power_limit_w():
  // permission_denied without root or CAP_SYS_ADMIN, invalid_argument for a range the GPU
  // refuses, not_supported where the clocks cannot be locked, gpu_lost.
  Status set_locked_sm_clocks_mhz(unsigned min_mhz, unsigned max_mhz) const;
  // Removes any SM clock lock (nvmlDeviceResetGpuLockedClocks): the driver chooses the clock
  // again. NVML has no getter for a lock, so this is how a lock is undone.
  Status reset_locked_sm_clocks() const;

  // Nanoseconds each reason has held the clocks down since the driver loaded, from NVML's
  // field counters (one nvmlDeviceGetFieldValues call). A reason without a counter on this
  // GPU/driver is absent from the map (hw_slowdown always is). Fails only when the call itself
  // does (not_supported without nvmlDeviceGetFieldValues, gpu_lost, ...).
  Result<std::map<ThrottleReason, std::uint64_t>> throttle_time_ns() const;

  Result<double> temperature_c() const;  // GPU core
  Result<double> memory_temperature_c() const;
  Result<double> temperature_threshold_c(TemperatureThreshold which) const;

  Result<unsigned> pcie_generation(LinkValue which) const;
  Result<unsigned> pcie_width(LinkValue which) const;  // lanes

  Result<bool> persistence_mode() const;
  Result<ComputeMode> compute_mode() const;
  Result<EnabledState> ecc_mode() const;
  Result<bool> gpm_supported() const;

  Result<EnabledState> mig_mode() const;
  // Every MIG device (GPU instance x compute instance). Empty when MIG is off.
  Result<std::vector<MigDevice>> mig_devices() const;

  // Readings for the monitor (src/nvml/nvml_monitor_fields.cc).
  Result<Utilization> utilization() const;
  Result<double> fan_speed_fraction() const;  // the first fan's target speed, 0..1
  // PCIe traffic {tx, rx} in bytes/s. NVML counts it over 20 ms *inside this call*: each call
  // blocks for that long, so the monitor reads it rarely (GPM gives it for free on Hopper+).
  Result<std::pair<double, double>> pcie_throughput_bytes_per_s() const;
  // Volatile ECC error count (since the driver loaded) of that type.
  Result<std::uint64_t> ecc_errors(EccErrorType type) const;
  Result<MonitorFields> monitor_fields() const;
  Result<std::vector<GpuProcess>> compute_processes() const;
  // Samples newer than `since_us` (a timestamp_us from an earlier answer; 0 for all the driver
  // keeps). Empty when there is none newer.
  Result<std::vector<ProcessUtilization>> process_utilization(std::uint64_t since_us) const;

 private:
  friend class Session;
  friend class GpmSampler;
  Device(const detail::Api* api, nvmlDevice_st* handle, unsigned index)
      : api_(api), handle_(handle), index_(index) {}

  const detail::Api* api_;
  nvmlDevice_st* handle_;
  unsigned index_;
};

// Takes GPM samples of one GPU, or of one MIG GPU instance, and returns the metrics between
// consecutive samples. NVML wants the GPM calls of a device serialized: use one sampler per
// device (or instance), from one thread. Frees its sample buffers when destroyed; REQUIRES: the
// Session outlives it.
class GpmSampler {
 public:
  // GPM needs the samples this far apart; a sample() sooner than that is not taken.
  static constexpr std::chrono::milliseconds kMinInterval{100};

  // Fails with not_supported when the GPU has no GPM or the driver lacks its functions.
  static Result<std::unique_ptr<GpmSampler>> open(const Device& device,
                                                  std::optional<unsigned> gpu_instance_id = {});
  ~GpmSampler();
  GpmSampler(const GpmSampler&) = delete;
  GpmSampler& operator=(const GpmSampler&) = delete;

  // Takes a sample stamped `now` and returns the metrics since the previous one; nullopt for the
  // first sample, and (without sampling) when the previous sample is less than kMinInterval old.
  // A metric the GPU does not report is absent.
  Result<std::optional<GpmMetrics>> sample(
      std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

 private:
  GpmSampler(const Device& device, std::optional<unsigned> gpu_instance_id);
  Status take(nvmlGpmSample_st* buffer);

  const detail::Api* api_;
  nvmlDevice_st* handle_;
  std::optional<unsigned> gpu_instance_id_;
  std::array<nvmlGpmSample_st*, 2> buffers_{};
  int previous_ = -1;  // index of the buffer holding the previous sample; -1 before the first
  std::chrono::steady_clock::time_point previous_time_;
};

// An initialized NVML. Opening loads the library and calls nvmlInit; destruction calls
// nvmlShutdown and unloads it.
class Session {
 public:
  // Fails with no_driver when no NVML library can be loaded or the driver is not running,
  // permission_denied when NVML refuses us, internal when a required symbol is missing.
  static Result<std::unique_ptr<Session>> open(const LoadOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& library_path() const;
  // The symbol that was bound for `name` ("nvmlInit_v2" may be bound to "nvmlInit" on an old
  // driver); empty when the symbol is absent.
  std::string bound_symbol(const std::string& name) const;

  Result<std::string> driver_version() const;
  Result<std::string> nvml_version() const;
  Result<int> cuda_driver_version() const;  // e.g. 13000 for CUDA 13.0

  Result<unsigned> device_count() const;
  Result<Device> device_by_index(unsigned index) const;
  Result<Device> device_by_uuid(const std::string& uuid) const;

 private:
  struct Loaded;
  explicit Session(std::unique_ptr<Loaded> loaded);
  std::unique_ptr<Loaded> loaded_;
};

// Names of the set bits of a clock-event-reasons mask ("sw_power_cap", "hw_thermal_slowdown",
// ...), in bit order. Unknown bits are named "bit_N".
std::vector<std::string> clock_event_reason_names(std::uint64_t mask);

}  // namespace gpuscope::nvml
