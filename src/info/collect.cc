#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "gpuscope/host.h"
#include "gpuscope/info.h"
#include "gpuscope/version.h"

namespace gpuscope {
namespace {

// Reads optional fields one by one: unsupported stays absent, a refused reading is noted, and
// the first sign that the GPU is gone stops the reading of this GPU.
class FieldReader {
 public:
  explicit FieldReader(GpuInfo& info) : info_(info) {}

  template <typename T, typename Getter>
  void read(std::optional<T>& out, const char* field, Getter&& getter) {
    if (!lost_.ok()) return;
    auto result = getter();
    if (result.ok()) {
      out = static_cast<T>(*result);
    } else {
      note(field, result.status());
    }
  }

  // For readings that fill several fields at once.
  template <typename Value, typename Getter, typename Apply>
  void read_into(const char* field, Getter&& getter, Apply&& apply) {
    if (!lost_.ok()) return;
    Result<Value> result = getter();
    if (result.ok()) {
      apply(*result);
    } else {
      note(field, result.status());
    }
  }

  void note(const char* field, const Status& status) {
    switch (status.code()) {
      case Code::not_supported:
        return;
      case Code::gpu_lost:
        lost_ = status.with_context(field);
        return;
      default:
        info_.unavailable.push_back({field, status.to_string()});
    }
  }

  const Status& lost() const { return lost_; }

 private:
  GpuInfo& info_;
  Status lost_;
};

const char* compute_mode_name(nvml::ComputeMode mode) {
  switch (mode) {
    case nvml::ComputeMode::default_mode:
      return "default";
    case nvml::ComputeMode::exclusive_thread:
      return "exclusive_thread";
    case nvml::ComputeMode::prohibited:
      return "prohibited";
    case nvml::ComputeMode::exclusive_process:
      return "exclusive_process";
  }
  return "unknown";
}

void attach_cuda(GpuInfo& gpu, const CudaInventory& cuda) {
  if (!gpu.pci_bus_id) return;
  for (const CudaDeviceProps& props : cuda.devices) {
    if (!same_pci_bus_id(props.pci_bus_id, *gpu.pci_bus_id)) continue;
    gpu.cuda_ordinal = props.ordinal;
    gpu.sm_count = props.sm_count;
    gpu.l2_cache_bytes = props.l2_cache_bytes;
    if (!gpu.cc_major) {
      gpu.cc_major = props.cc_major;
      gpu.cc_minor = props.cc_minor;
    }
    return;
  }
}

void attach_peak(GpuInfo& gpu) {
  GpuDescription description;
  description.nvml_name = gpu.name;
  description.memory_total_bytes = gpu.memory_total_bytes;
  description.cc_major = gpu.cc_major;
  description.cc_minor = gpu.cc_minor;
  description.sm_count = gpu.sm_count;
  description.max_sm_clock_mhz = gpu.sm_clock_max_mhz;
  description.max_mem_clock_mhz = gpu.mem_clock_max_mhz;
  description.memory_bus_width_bits = gpu.memory_bus_width_bits;
  if (auto peak = peak_rates_for(description); peak.ok()) gpu.peak = std::move(peak).value();
}

// Reads one GPU. Returns its failure when it stops answering while being read.
Result<GpuInfo> read_gpu(const nvml::Device& device, const CudaInventory& cuda) {
  using nvml::ClockDomain;
  using nvml::LinkValue;
  using nvml::TemperatureThreshold;

  GpuInfo gpu;
  gpu.index = device.index();
  // Identity is required: without a name and UUID there is nothing to report.
  GPUSCOPE_ASSIGN_OR_RETURN(gpu.name, device.name());
  GPUSCOPE_ASSIGN_OR_RETURN(gpu.uuid, device.uuid());

  FieldReader r(gpu);
  r.read_into<nvml::PciInfo>(
      "pci", [&] { return device.pci(); },
      [&](const nvml::PciInfo& pci) { gpu.pci_bus_id = pci.bus_id; });
  r.read_into<std::pair<int, int>>(
      "compute_capability", [&] { return device.cuda_compute_capability(); },
      [&](const std::pair<int, int>& cc) {
        gpu.cc_major = cc.first;
        gpu.cc_minor = cc.second;
      });
  r.read_into<nvml::MemoryInfo>(
      "memory", [&] { return device.memory(); },
      [&](const nvml::MemoryInfo& m) {
        gpu.memory_total_bytes = m.total_bytes;
        gpu.memory_used_bytes = m.used_bytes;
        gpu.memory_reserved_bytes = m.reserved_bytes;
      });
  r.read(gpu.memory_bus_width_bits, "memory_bus_width",
         [&] { return device.memory_bus_width_bits(); });

  r.read(gpu.sm_clock_mhz, "sm_clock", [&] { return device.clock_mhz(ClockDomain::sm); });
  r.read(gpu.sm_clock_max_mhz, "sm_clock_max",
         [&] { return device.max_clock_mhz(ClockDomain::sm); });
  r.read(gpu.mem_clock_mhz, "mem_clock", [&] { return device.clock_mhz(ClockDomain::memory); });
  r.read(gpu.mem_clock_max_mhz, "mem_clock_max",
         [&] { return device.max_clock_mhz(ClockDomain::memory); });

  r.read(gpu.power_draw_w, "power_draw", [&] { return device.power_w(); });
  r.read(gpu.power_limit_w, "power_limit", [&] { return device.power_limit_w(); });
  r.read(gpu.power_default_limit_w, "power_default_limit",
         [&] { return device.default_power_limit_w(); });
  r.read(gpu.power_enforced_limit_w, "power_enforced_limit",
         [&] { return device.enforced_power_limit_w(); });
  r.read_into<std::pair<double, double>>(
      "power_limit_range", [&] { return device.power_limit_range_w(); },
      [&](const std::pair<double, double>& range) {
        gpu.power_min_limit_w = range.first;
        gpu.power_max_limit_w = range.second;
      });

  r.read(gpu.temperature_c, "temperature", [&] { return device.temperature_c(); });
  r.read(gpu.memory_temperature_c, "memory_temperature",
         [&] { return device.memory_temperature_c(); });
  r.read(gpu.temperature_slowdown_c, "temperature_slowdown",
         [&] { return device.temperature_threshold_c(TemperatureThreshold::slowdown); });
  r.read(gpu.temperature_shutdown_c, "temperature_shutdown",
         [&] { return device.temperature_threshold_c(TemperatureThreshold::shutdown); });
  r.read(gpu.temperature_gpu_max_c, "temperature_gpu_max",
         [&] { return device.temperature_threshold_c(TemperatureThreshold::gpu_max); });
  r.read(gpu.temperature_memory_max_c, "temperature_memory_max",
         [&] { return device.temperature_threshold_c(TemperatureThreshold::memory_max); });

  r.read(gpu.pcie_gen_current, "pcie_gen",
         [&] { return device.pcie_generation(LinkValue::current); });
  r.read(gpu.pcie_gen_max, "pcie_gen_max", [&] { return device.pcie_generation(LinkValue::max); });
  r.read(gpu.pcie_gen_gpu_max, "pcie_gen_gpu_max",
         [&] { return device.pcie_generation(LinkValue::gpu_max); });
  r.read(gpu.pcie_width_current, "pcie_width",
         [&] { return device.pcie_width(LinkValue::current); });
  r.read(gpu.pcie_width_max, "pcie_width_max", [&] { return device.pcie_width(LinkValue::max); });

  r.read(gpu.persistence_mode, "persistence_mode", [&] { return device.persistence_mode(); });
  r.read_into<nvml::ComputeMode>(
      "compute_mode", [&] { return device.compute_mode(); },
      [&](nvml::ComputeMode mode) { gpu.compute_mode = compute_mode_name(mode); });
  r.read_into<nvml::EnabledState>(
      "ecc", [&] { return device.ecc_mode(); },
      [&](const nvml::EnabledState& ecc) {
        gpu.ecc_current = ecc.current;
        gpu.ecc_pending = ecc.pending;
      });

  r.read_into<std::uint64_t>(
      "clock_event_reasons", [&] { return device.clock_event_reasons(); },
      [&](std::uint64_t mask) {
        gpu.clock_event_reasons = mask;
        gpu.clock_event_reason_names = nvml::clock_event_reason_names(mask);
      });
  std::optional<double> energy;
  r.read(energy, "energy_counter", [&] { return device.total_energy_j(); });
  gpu.energy_counter_supported = energy.has_value();
  r.read(gpu.gpm_supported, "gpm", [&] { return device.gpm_supported(); });

  r.read_into<nvml::EnabledState>(
      "mig_mode", [&] { return device.mig_mode(); },
      [&](const nvml::EnabledState& mig) {
        gpu.mig_current = mig.current;
        gpu.mig_pending = mig.pending;
      });
  if (gpu.mig_current.value_or(false)) {
    r.read_into<std::vector<nvml::MigDevice>>(
        "mig_devices", [&] { return device.mig_devices(); },
        [&](const std::vector<nvml::MigDevice>& devices) {
          for (const nvml::MigDevice& d : devices) {
            gpu.mig_instances.push_back({d.gpu_instance_id, d.compute_instance_id, d.name,
                                         mig_profile_from_name(d.name), d.uuid,
                                         d.memory_total_bytes, d.sm_count});
          }
        });
  }
  if (!r.lost().ok()) return r.lost();

  attach_cuda(gpu, cuda);
  attach_peak(gpu);
  return gpu;
}

std::string hostname() {
  const std::string name = host_name();
  return name.empty() ? "unknown" : name;
}

// The devices `selector` names (resolve_targets; a MIG instance's selector names its GPU). With
// no selector, a GPU that is listed but cannot be opened (lost since the count was taken) goes
// to `failures` and the rest are returned.
Result<std::vector<nvml::Device>> select_devices(const nvml::Session& session,
                                                 const std::string& selector,
                                                 std::vector<GpuFailure>& failures) {
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<Target> available, list_targets(session));
  std::vector<std::string> selectors;
  if (!selector.empty()) selectors.push_back(selector);
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<Target> chosen,
                            resolve_targets(available, selectors, TargetUse::observe));
  const auto gpus = std::count_if(available.begin(), available.end(),
                                  [](const Target& t) { return !t.is_mig(); });
  std::vector<nvml::Device> devices;
  for (const Target& t : chosen) {
    if (std::any_of(devices.begin(), devices.end(),
                    [&](const nvml::Device& d) { return d.index() == t.gpu_index; })) {
      continue;
    }
    Result<nvml::Device> device = t.unavailable.ok() ? session.device_by_index(t.gpu_index)
                                                     : Result<nvml::Device>(t.unavailable);
    if (device.ok()) {
      devices.push_back(*device);
    } else if (selectors.empty() && gpus > 1) {
      failures.push_back({t.gpu_index, device.status()});
    } else if (selectors.empty()) {
      return device.status().with_context(fmt::format("GPU {}", t.gpu_index));
    } else {
      return device.status();
    }
  }
  return devices;
}

}  // namespace

std::vector<Target> targets_of(const SystemInfo& info) {
  std::vector<Target> targets;
  for (const GpuInfo& gpu : info.gpus) {
    Target t;
    t.gpu_index = gpu.index;
    t.gpu_uuid = gpu.uuid;
    t.gpu_name = gpu.name;
    t.pci_bus_id = gpu.pci_bus_id;
    t.name = gpu.name;
    t.memory_total_bytes = gpu.memory_total_bytes;
    if (gpu.sm_count) t.sm_count = static_cast<unsigned>(*gpu.sm_count);
    t.mig_mode = gpu.mig_current.value_or(false);
    targets.push_back(t);
    if (!t.mig_mode) continue;
    for (const MigInstanceInfo& instance : gpu.mig_instances) {
      Target m = t;
      m.mig_mode = false;
      m.mig = MigPlacement{instance.gpu_instance_id, instance.compute_instance_id, instance.uuid,
                           instance.profile};
      m.name = instance.name;
      m.memory_total_bytes = instance.memory_total_bytes;
      m.sm_count = instance.sm_count;
      targets.push_back(std::move(m));
    }
  }
  return targets;
}

Result<SystemInfo> collect_info(const nvml::Session& session, const CudaInventory& cuda,
                                const InfoOptions& options) {
  SystemInfo info;
  info.gpuscope_version = std::string(version());
  info.hostname = hostname();
  info.nvml_library = session.library_path();
  if (auto v = session.driver_version(); v.ok()) info.driver_version = *v;
  if (auto v = session.nvml_version(); v.ok()) info.nvml_version = *v;
  if (auto v = session.cuda_driver_version(); v.ok()) info.cuda_driver_version = *v;
  info.cuda_runtime_version = cuda.runtime_version;
  info.cuda_status = cuda.status;

  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<nvml::Device> devices,
                            select_devices(session, options.gpu, info.failures));
  for (const nvml::Device& device : devices) {
    Result<GpuInfo> gpu = read_gpu(device, cuda);
    if (gpu.ok()) {
      info.gpus.push_back(std::move(gpu).value());
    } else if (devices.size() == 1) {
      return gpu.status().with_context(fmt::format("GPU {}", device.index()));
    } else {
      info.failures.push_back({device.index(), gpu.status()});
    }
  }
  return info;
}

}  // namespace gpuscope
