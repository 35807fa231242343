// A scripted machine: what the fake NVML reports, parsed from the JSON described in README.md.
//
// Optional members are things a GPU may lack: an absent one makes the NVML calls that read it
// return NVML_ERROR_NOT_SUPPORTED, as the real library does on a GPU without the feature.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fake_nvml_export.h"
#include "step_series.h"

namespace gpuscope::fake_nvml {

// The most GPUs, and MIG devices per GPU, a scenario may hold (handles live in a fixed pool).
inline constexpr unsigned kMaxDevices = 64;
inline constexpr unsigned kMaxMigDevices = 8;

// A scenario that cannot be used; what() names the JSON path of the problem.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MaxClocks {
  std::optional<unsigned> sm_mhz, mem_mhz, graphics_mhz, video_mhz;
};

struct PowerLimits {
  std::optional<unsigned> current_mw, default_mw, min_mw, max_mw, enforced_mw;
};

struct TemperatureThresholds {
  std::optional<unsigned> slowdown_c, shutdown_c, gpu_max_c, mem_max_c;
};

struct Pcie {
  std::optional<unsigned> current_gen, max_gen, gpu_max_gen, current_width, max_width;
};

struct Ecc {
  bool current = false;
  bool pending = false;
  unsigned long long corrected_volatile = 0, uncorrected_volatile = 0;
  unsigned long long corrected_aggregate = 0, uncorrected_aggregate = 0;
};

struct MigInstance {
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  std::string name;  // "NVIDIA A100-SXM4-40GB MIG 3g.20gb"
  std::string uuid;  // "MIG-..."
  unsigned long long memory_total_bytes = 0;
  unsigned long long memory_used_bytes = 0;
  unsigned sm_count = 0;
  // nvmlDeviceAttributes_t; the slice counts default to the "<n>g" of the profile name.
  unsigned gpu_instance_slice_count = 0, compute_instance_slice_count = 0;
  unsigned shared_copy_engine_count = 0, shared_decoder_count = 0, shared_encoder_count = 0;
  unsigned shared_jpeg_count = 0, shared_ofa_count = 0;
};

struct Mig {
  bool current = false;
  bool pending = false;
  unsigned max_device_count = 7;  // A100/H100: at most seven MIG devices
  std::vector<MigInstance> instances;
};

struct Nvlink {
  unsigned link_count = 0;
  // How many of the links go to each other GPU (by scenario index), links 0.. in that order;
  // links beyond them are inactive. Empty: every link active, its far end unknown.
  std::map<unsigned, unsigned> peers;
  // Every link ends at an NVSwitch (an HGX board): the far end's PCI address is a switch's and
  // NVLink P2P is OK to every other GPU whose links also go to switches.
  bool nvswitch = false;
};

struct Process {
  unsigned pid = 0;
  unsigned long long used_memory_bytes = 0;
  unsigned sm_util = 0;
  unsigned mem_util = 0;
};

// The device's readings over time, one step series per reading (README.md lists the names,
// e.g. "power_mw", "gpm.sm_util"). A reading no timeline entry names is absent.
struct Timeline {
  std::map<std::string, StepSeries, std::less<>> readings;
  Steps<std::vector<Process>> processes;

  const StepSeries* reading(std::string_view name) const {
    const auto it = readings.find(name);
    return it == readings.end() ? nullptr : &it->second;
  }
};

// How a workload's speed, power, clocks and temperature follow the power limit (the sweep's
// simulation). `points` are (limit W, fraction of the speed at the maximum limit), sorted by
// limit; between them the fraction is linear, outside them it holds the end values.
struct WorkloadCurve {
  double peak_samples_per_second = 0;
  double max_draw_w = 0;  // what it draws uncapped; it draws min(limit, this)
  std::vector<std::pair<double, double>> points;
};

// Present: power, energy, SM/graphics clock, GPU temperature, utilization and the power-cap
// clock-event reason come from this model instead of the timeline, for the workload running on
// the GPU (gpuscope_fake_nvml_start_workload) or for an idle GPU.
struct PowerResponse {
  double idle_power_w = 0;
  double idle_sm_clock_mhz = 0;
  double peak_sm_clock_mhz = 0;  // at fraction 1; scaled by the speed fraction below it
  double ambient_c = 0;          // temperature = ambient_c + c_per_w x power
  double c_per_w = 0;
  std::map<std::string, WorkloadCurve, std::less<>> curves;
};

struct Device {
  std::string name;
  std::string uuid;
  std::string pci_bus_id;  // "00000000:18:00.0"
  unsigned pci_device_id = 0;
  unsigned pci_subsystem_id = 0;
  std::optional<unsigned long long> memory_total_bytes;
  unsigned long long memory_reserved_bytes = 0;
  std::optional<std::pair<int, int>> compute_capability;
  std::optional<unsigned> memory_bus_width_bits;
  MaxClocks max_clocks;
  PowerLimits power_limits;
  TemperatureThresholds temperature_thresholds;
  Pcie pcie;
  std::optional<bool> persistence_mode;
  std::optional<nvmlComputeMode_t> compute_mode;
  std::optional<Ecc> ecc;
  std::optional<unsigned long long> supported_clock_event_reasons;
  bool gpm_supported = false;
  bool energy_counter = false;
  double energy_offset_mj = 0.0;
  unsigned fan_count = 0;
  std::optional<Mig> mig;
  std::optional<Nvlink> nvlink;
  // nvmlDeviceGetTopologyCommonAncestor to another GPU (by index): an nvmlGpuTopologyLevel_t
  // value (0 internal, 10 single, 20 multiple, 30 host bridge, 40 node, 50 system); a GPU not
  // listed answers NOT_SUPPORTED.
  std::map<unsigned, unsigned> pcie_topology;
  std::set<std::string, std::less<>> unsupported_functions;
  std::set<unsigned> unsupported_fields;
  std::optional<double> lost_at_t;
  std::optional<PowerResponse> power_response;
  Timeline timeline;
};

// A scripted failure: `function` returns `result` while from_t <= t < until_t.
struct ScriptedError {
  std::string function;
  std::optional<unsigned> device;  // GPU index; nullopt = every device and device-less calls
  double from_t = 0.0;
  std::optional<double> until_t;  // nullopt = forever
  nvmlReturn_t result = NVML_ERROR_UNKNOWN;
};

struct Scenario {
  std::string description;
  std::string driver_version = "580.95.05";
  std::string nvml_version = "13.580.95.05";
  int cuda_driver_version = 13000;
  std::optional<nvmlReturn_t> init_error;
  std::vector<Device> devices;
  std::vector<ScriptedError> errors;
};

// Parses and checks a scenario. Unknown keys, misspelled function or reading names, unsorted
// timelines and out-of-range numbers are errors, so a typo in a fixture fails loudly instead of
// reading as "not supported". Throws ScenarioError.
Scenario parse_scenario(std::string_view json_text);

// Whether `name` is an NVML function the fake implements (the names in nvml_symbols.inc).
bool is_fake_nvml_function(std::string_view name);

}  // namespace gpuscope::fake_nvml
