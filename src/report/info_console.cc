#include <fmt/format.h>

#include "gpuscope/info_report.h"
#include "report/table.h"

namespace gpuscope {
namespace {

using report::format_bytes;
using report::TextTable;

std::string watts(double w) {
  return fmt::format("{:.0f} W", w);
}
std::string celsius(double c) {
  return fmt::format("{:.0f} °C", c);
}
std::string on_off(bool on) {
  return on ? "on" : "off";
}

template <typename T, typename Format>
std::string or_na(const std::optional<T>& value, Format&& format) {
  return value ? format(*value) : std::string("n/a");
}

std::string pcie_line(const GpuInfo& g) {
  if (!g.pcie_gen_current && !g.pcie_width_current) return "n/a";
  std::string line = fmt::format(
      "Gen{} x{}", or_na(g.pcie_gen_current, [](unsigned v) { return std::to_string(v); }),
      or_na(g.pcie_width_current, [](unsigned v) { return std::to_string(v); }));
  if (g.pcie_gen_max || g.pcie_width_max) {
    line += fmt::format(" now, max Gen{} x{}",
                        or_na(g.pcie_gen_max, [](unsigned v) { return std::to_string(v); }),
                        or_na(g.pcie_width_max, [](unsigned v) { return std::to_string(v); }));
  }
  if (g.pcie_gen_current && g.pcie_gen_max && *g.pcie_gen_current < *g.pcie_gen_max) {
    line += " (idle GPUs lower the link to save power)";
  }
  return line;
}

std::string compute_line(const GpuInfo& g) {
  std::vector<std::string> parts;
  if (g.cc_major)
    parts.push_back(fmt::format("compute capability {}.{}", *g.cc_major, *g.cc_minor));
  if (g.sm_count) parts.push_back(fmt::format("{} SMs", *g.sm_count));
  if (g.l2_cache_bytes) parts.push_back(fmt::format("L2 {}", format_bytes(*g.l2_cache_bytes)));
  if (!g.cuda_ordinal) parts.push_back("SM count needs a CUDA-visible GPU");
  return parts.empty() ? "n/a" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string memory_line(const GpuInfo& g) {
  if (!g.memory_total_bytes) return "n/a";
  std::string line = fmt::format("{} total, {} used", format_bytes(*g.memory_total_bytes),
                                 or_na(g.memory_used_bytes, format_bytes));
  if (g.memory_bus_width_bits) line += fmt::format(", {}-bit bus", *g.memory_bus_width_bits);
  return line;
}

std::string clocks_line(const GpuInfo& g) {
  auto mhz = [](unsigned v) { return std::to_string(v); };
  return fmt::format("SM {} of {} MHz, memory {} of {} MHz", or_na(g.sm_clock_mhz, mhz),
                     or_na(g.sm_clock_max_mhz, mhz), or_na(g.mem_clock_mhz, mhz),
                     or_na(g.mem_clock_max_mhz, mhz));
}

std::string power_line(const GpuInfo& g) {
  return fmt::format("draw {}, limit {} (default {}, range {}-{}, enforced {})",
                     or_na(g.power_draw_w, watts), or_na(g.power_limit_w, watts),
                     or_na(g.power_default_limit_w, watts), or_na(g.power_min_limit_w, watts),
                     or_na(g.power_max_limit_w, watts), or_na(g.power_enforced_limit_w, watts));
}

std::string temperature_line(const GpuInfo& g) {
  std::string line = fmt::format("GPU {}", or_na(g.temperature_c, celsius));
  if (g.memory_temperature_c) line += fmt::format(", memory {}", celsius(*g.memory_temperature_c));
  line += fmt::format("; slowdown at {}, shutdown at {}", or_na(g.temperature_slowdown_c, celsius),
                      or_na(g.temperature_shutdown_c, celsius));
  if (g.temperature_gpu_max_c)
    line += fmt::format(", max operating {}", celsius(*g.temperature_gpu_max_c));
  return line;
}

std::string modes_line(const GpuInfo& g) {
  std::string ecc = "n/a";
  if (g.ecc_current) {
    ecc = on_off(*g.ecc_current);
    if (g.ecc_pending && *g.ecc_pending != *g.ecc_current) {
      ecc += fmt::format(" ({} after reset)", on_off(*g.ecc_pending));
    }
  }
  return fmt::format("persistence {}, compute {}, ECC {}", or_na(g.persistence_mode, on_off),
                     g.compute_mode.value_or("n/a"), ecc);
}

std::string clock_events_line(const GpuInfo& g) {
  if (!g.clock_event_reasons) return "n/a";
  if (g.clock_event_reason_names.empty()) return "none (running at full clocks)";
  return fmt::format("{}", fmt::join(g.clock_event_reason_names, ", "));
}

std::string mig_line(const GpuInfo& g) {
  if (!g.mig_current) return "not supported";
  std::string line = *g.mig_current ? fmt::format("enabled, {} instance{}", g.mig_instances.size(),
                                                  g.mig_instances.size() == 1 ? "" : "s")
                                    : std::string("disabled");
  if (g.mig_pending && *g.mig_pending != *g.mig_current) {
    line += fmt::format(" ({} after reset)", *g.mig_pending ? "enabled" : "disabled");
  }
  return line;
}

void print_mig(const GpuInfo& g, std::ostream& out) {
  if (g.mig_instances.empty()) return;
  TextTable table({"GI", "CI", "profile", "SMs", "memory", "UUID (for CUDA_VISIBLE_DEVICES)"});
  for (const MigInstanceInfo& m : g.mig_instances) {
    table.add_row({std::to_string(m.gpu_instance_id), std::to_string(m.compute_instance_id),
                   m.profile.empty() ? m.name : m.profile,
                   or_na(m.sm_count, [](unsigned v) { return std::to_string(v); }),
                   or_na(m.memory_total_bytes, format_bytes), m.uuid});
  }
  out << '\n';
  table.print(out, 4);
}

void print_peak(const PeakRates& peak, std::ostream& out) {
  std::vector<std::string> header = {"peak (dense)"};
  std::vector<std::string> row = {peak.estimated ? "estimate" : "datasheet"};
  for (Precision p : kAllPrecisions) {
    header.emplace_back(precision_name(p));
    auto it = peak.flops_per_s.find(p);
    row.push_back(it == peak.flops_per_s.end() ? "-" : fmt::format("{:.1f}", it->second / 1e12));
  }
  header.emplace_back("memory");
  row.push_back(or_na(peak.memory_bandwidth_bytes_per_s,
                      [](double b) { return report::format_rate(b, "B/s"); }));
  TextTable table(header);
  table.add_row(row);
  out << fmt::format("\n    {} {} (TFLOP/s; int8 in TOP/s)\n", peak.model,
                     peak.estimated ? "estimated peak" : "datasheet peak");
  table.print(out, 4);
  out << fmt::format("    source: {}\n", peak.source);
  if (!peak.notes.empty()) out << fmt::format("    note: {}\n", peak.notes);
}

}  // namespace

void print_info(const SystemInfo& info, std::ostream& out) {
  out << fmt::format("gpuscope {} on {}: driver {}, CUDA {} (driver), NVML {}\n",
                     info.gpuscope_version, info.hostname, info.driver_version.value_or("n/a"),
                     or_na(info.cuda_driver_version, report::format_cuda_version),
                     info.nvml_version.value_or("n/a"));
  if (!info.cuda_status.ok()) {
    out << fmt::format("CUDA runtime sees no GPU ({}); SM counts are unavailable\n",
                       info.cuda_status.message());
  }
  for (const GpuInfo& g : info.gpus) {
    out << fmt::format("\nGPU {}  {}\n", g.index, g.name);
    TextTable table;
    table.add_row({"UUID", g.uuid});
    table.add_row({"PCI", fmt::format("{}, PCIe {}", g.pci_bus_id.value_or("n/a"), pcie_line(g))});
    table.add_row({"Compute", compute_line(g)});
    table.add_row({"Memory", memory_line(g)});
    table.add_row({"Clocks", clocks_line(g)});
    table.add_row({"Power", power_line(g)});
    table.add_row({"Temperature", temperature_line(g)});
    table.add_row({"Modes", modes_line(g)});
    table.add_row({"Clock events", clock_events_line(g)});
    table.add_row({"Telemetry", fmt::format("energy counter {}, GPM {}",
                                            g.energy_counter_supported ? "yes" : "no",
                                            or_na(g.gpm_supported, [](bool b) {
                                              return std::string(b ? "yes" : "no");
                                            }))});
    table.add_row({"MIG", mig_line(g)});
    for (const Unavailable& u : g.unavailable) {
      table.add_row({"Unavailable", fmt::format("{}: {}", u.field, u.reason)});
    }
    table.print(out, 2);
    print_mig(g, out);
    if (g.peak) print_peak(*g.peak, out);
  }
  for (const GpuFailure& f : info.failures) {
    out << fmt::format("\nGPU {}  FAILED while being read: {}\n", f.index, f.status.to_string());
  }
}

}  // namespace gpuscope
