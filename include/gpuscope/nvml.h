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

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuscope/status.h"

struct nvmlDevice_st;  // NVML's opaque handle type (from nvml.h, which stays private)

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

struct EnabledState {
  bool current = false;
  bool pending = false;  // takes effect after the next GPU reset / reboot
};

enum class ComputeMode { default_mode, exclusive_thread, prohibited, exclusive_process };

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

 private:
  friend class Session;
  Device(const detail::Api* api, nvmlDevice_st* handle, unsigned index)
      : api_(api), handle_(handle), index_(index) {}

  const detail::Api* api_;
  nvmlDevice_st* handle_;
  unsigned index_;
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
