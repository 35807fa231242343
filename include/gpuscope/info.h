// `gpuscope info`: everything a user wants to know about each GPU before measuring it, as one
// plain record per GPU. Absent optionals mean "this GPU/driver does not report it".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/cuda_probe.h"
#include "gpuscope/datasheet.h"
#include "gpuscope/nvml.h"
#include "gpuscope/status.h"
#include "gpuscope/target.h"

namespace gpuscope {

struct MigInstanceInfo {
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  std::string name;     // "NVIDIA A100-SXM4-40GB MIG 3g.20gb"
  std::string profile;  // "3g.20gb" (from the name), empty if it has none
  std::string uuid;     // "MIG-...", usable in CUDA_VISIBLE_DEVICES
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<unsigned> sm_count;
};

// A reading the driver refused (permission) or failed to give; unsupported ones are not listed.
struct Unavailable {
  std::string field;
  std::string reason;
};

struct GpuInfo {
  unsigned index = 0;  // NVML index (nvidia-smi's numbering)
  std::string name;
  std::string uuid;
  std::optional<std::string> pci_bus_id;

  std::optional<int> cc_major, cc_minor;
  std::optional<int> sm_count;      // from the CUDA runtime
  std::optional<int> cuda_ordinal;  // this GPU's CUDA device number, if CUDA sees it
  std::optional<std::uint64_t> l2_cache_bytes;

  std::optional<std::uint64_t> memory_total_bytes, memory_used_bytes, memory_reserved_bytes;
  std::optional<unsigned> memory_bus_width_bits;

  std::optional<unsigned> sm_clock_mhz, sm_clock_max_mhz, mem_clock_mhz, mem_clock_max_mhz;

  std::optional<double> power_draw_w, power_limit_w, power_default_limit_w, power_min_limit_w,
      power_max_limit_w, power_enforced_limit_w;

  std::optional<double> temperature_c, memory_temperature_c, temperature_slowdown_c,
      temperature_shutdown_c, temperature_gpu_max_c, temperature_memory_max_c;

  std::optional<unsigned> pcie_gen_current, pcie_gen_max, pcie_gen_gpu_max, pcie_width_current,
      pcie_width_max;

  std::optional<bool> persistence_mode;
  std::optional<std::string> compute_mode;  // "default", "exclusive_process", "prohibited", ...
  std::optional<bool> ecc_current, ecc_pending;

  std::optional<std::uint64_t> clock_event_reasons;  // bitmask; names below
  std::vector<std::string> clock_event_reason_names;

  bool energy_counter_supported = false;
  std::optional<bool> gpm_supported;

  std::optional<bool> mig_current, mig_pending;  // absent = MIG not supported
  std::vector<MigInstanceInfo> mig_instances;

  std::optional<PeakRates> peak;  // datasheet, or an estimate (peak->estimated)

  std::vector<Unavailable> unavailable;
};

// A GPU that was listed but failed while being read (e.g. fell off the bus).
struct GpuFailure {
  unsigned index = 0;
  Status status;
};

struct SystemInfo {
  std::string gpuscope_version;
  std::string hostname;
  std::string nvml_library;
  std::optional<std::string> driver_version;
  std::optional<std::string> nvml_version;
  std::optional<int> cuda_driver_version;   // from NVML, e.g. 13000
  std::optional<int> cuda_runtime_version;  // gpuscope's own CUDA runtime
  Status cuda_status;                       // why CUDA sees no devices, if it sees none
  std::vector<GpuInfo> gpus;
  std::vector<GpuFailure> failures;
};

struct InfoOptions {
  // Empty: every GPU. Else a selector (gpuscope/target.h): an NVML index ("0"), a GPU UUID
  // ("GPU-..."), a MIG instance's UUID (its GPU is read), "all", or a list of them.
  std::string gpu;
};

// Reads every selected GPU. Fails with invalid_argument/not_found for a selector that names no
// GPU, no_device when NVML lists none; a GPU that fails mid-read is listed in `failures` and
// the others are still read (unless it was the only one selected: then its Status is returned).
Result<SystemInfo> collect_info(const nvml::Session& session, const CudaInventory& cuda,
                                const InfoOptions& options);

// The targets of collected info, in the form list_targets() gives them (each GPU, and after a
// GPU in MIG mode its instances), for resolve_targets(). A whole GPU's sm_count is CUDA's.
std::vector<Target> targets_of(const SystemInfo& info);

}  // namespace gpuscope
