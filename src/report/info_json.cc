#include "gpuscope/info_report.h"
#include "gpuscope/json.h"

namespace gpuscope {
namespace {

using nlohmann::json;

std::string fmt_cc(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

json peak_to_json(const PeakRates& peak) {
  json rates = json::object();
  for (const auto& [precision, flops] : peak.flops_per_s) {
    rates[std::string(precision_name(precision))] = flops;
  }
  json out = {{"model", peak.model},
              {"estimated", peak.estimated},
              {"flops_per_s", rates},
              {"source", peak.source}};
  put(out, "memory_bandwidth_bytes_per_s", peak.memory_bandwidth_bytes_per_s);
  if (!peak.notes.empty()) out["notes"] = peak.notes;
  return out;
}

json gpu_to_json(const GpuInfo& gpu) {
  json g = {{"index", gpu.index}, {"name", gpu.name}, {"uuid", gpu.uuid}};
  put(g, "pci_bus_id", gpu.pci_bus_id);
  if (gpu.cc_major) g["compute_capability"] = fmt_cc(*gpu.cc_major, gpu.cc_minor.value_or(0));
  put(g, "sm_count", gpu.sm_count);
  put(g, "cuda_ordinal", gpu.cuda_ordinal);
  put(g, "l2_cache_bytes", gpu.l2_cache_bytes);

  json memory = json::object();
  put(memory, "total_bytes", gpu.memory_total_bytes);
  put(memory, "used_bytes", gpu.memory_used_bytes);
  put(memory, "reserved_bytes", gpu.memory_reserved_bytes);
  put(memory, "bus_width_bits", gpu.memory_bus_width_bits);
  g["memory"] = memory;

  json clocks = json::object();
  put(clocks, "sm_mhz", gpu.sm_clock_mhz);
  put(clocks, "sm_max_mhz", gpu.sm_clock_max_mhz);
  put(clocks, "memory_mhz", gpu.mem_clock_mhz);
  put(clocks, "memory_max_mhz", gpu.mem_clock_max_mhz);
  g["clocks"] = clocks;

  json power = json::object();
  put(power, "draw_w", gpu.power_draw_w);
  put(power, "limit_w", gpu.power_limit_w);
  put(power, "default_limit_w", gpu.power_default_limit_w);
  put(power, "min_limit_w", gpu.power_min_limit_w);
  put(power, "max_limit_w", gpu.power_max_limit_w);
  put(power, "enforced_limit_w", gpu.power_enforced_limit_w);
  power["energy_counter_supported"] = gpu.energy_counter_supported;
  g["power"] = power;

  json temperature = json::object();
  put(temperature, "gpu_c", gpu.temperature_c);
  put(temperature, "memory_c", gpu.memory_temperature_c);
  put(temperature, "slowdown_c", gpu.temperature_slowdown_c);
  put(temperature, "shutdown_c", gpu.temperature_shutdown_c);
  put(temperature, "gpu_max_c", gpu.temperature_gpu_max_c);
  put(temperature, "memory_max_c", gpu.temperature_memory_max_c);
  g["temperature"] = temperature;

  json pcie = json::object();
  put(pcie, "generation", gpu.pcie_gen_current);
  put(pcie, "generation_max", gpu.pcie_gen_max);
  put(pcie, "generation_gpu_max", gpu.pcie_gen_gpu_max);
  put(pcie, "width", gpu.pcie_width_current);
  put(pcie, "width_max", gpu.pcie_width_max);
  g["pcie"] = pcie;

  put(g, "persistence_mode", gpu.persistence_mode);
  put(g, "compute_mode", gpu.compute_mode);
  if (gpu.ecc_current) g["ecc"] = {{"current", *gpu.ecc_current}, {"pending", *gpu.ecc_pending}};
  if (gpu.clock_event_reasons) {
    g["clock_event_reasons"] = {{"mask", *gpu.clock_event_reasons},
                                {"active", gpu.clock_event_reason_names}};
  }
  put(g, "gpm_supported", gpu.gpm_supported);

  if (gpu.mig_current) {
    json instances = json::array();
    for (const MigInstanceInfo& m : gpu.mig_instances) {
      json instance = {{"gpu_instance_id", m.gpu_instance_id},
                       {"compute_instance_id", m.compute_instance_id},
                       {"name", m.name},
                       {"profile", m.profile},
                       {"uuid", m.uuid}};
      put(instance, "memory_total_bytes", m.memory_total_bytes);
      put(instance, "sm_count", m.sm_count);
      instances.push_back(instance);
    }
    g["mig"] = {{"current", *gpu.mig_current},
                {"pending", gpu.mig_pending.value_or(false)},
                {"instances", instances}};
  }
  if (gpu.peak) g["peak"] = peak_to_json(*gpu.peak);
  if (!gpu.unavailable.empty()) {
    json unavailable = json::array();
    for (const Unavailable& u : gpu.unavailable) {
      unavailable.push_back({{"field", u.field}, {"reason", u.reason}});
    }
    g["unavailable"] = unavailable;
  }
  return g;
}

}  // namespace

json info_to_json(const SystemInfo& info) {
  json host = {{"hostname", info.hostname},
               {"gpuscope_version", info.gpuscope_version},
               {"nvml_library", info.nvml_library}};
  put(host, "driver_version", info.driver_version);
  put(host, "nvml_version", info.nvml_version);
  put(host, "cuda_driver_version", info.cuda_driver_version);
  put(host, "cuda_runtime_version", info.cuda_runtime_version);
  if (!info.cuda_status.ok()) host["cuda_status"] = info.cuda_status.to_string();

  json gpus = json::array();
  for (const GpuInfo& gpu : info.gpus) gpus.push_back(gpu_to_json(gpu));
  json failures = json::array();
  for (const GpuFailure& f : info.failures) {
    failures.push_back({{"index", f.index},
                        {"error", std::string(code_name(f.status.code()))},
                        {"message", f.status.message()}});
  }
  return {{"schema_version", kInfoSchemaVersion},
          {"kind", "gpuscope.info"},
          {"host", host},
          {"gpus", gpus},
          {"failures", failures}};
}

}  // namespace gpuscope
