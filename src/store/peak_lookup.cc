// Peak rates for a GPU record, from gpuscope's datasheet table.
#include <cstdio>

#include "gpuscope/datasheet.h"
#include "gpuscope/store.h"

namespace gpuscope::store {

std::optional<PeakRecord> datasheet_peak(const GpuRecord& gpu) {
  GpuDescription description;
  description.nvml_name = gpu.name;
  description.memory_total_bytes = gpu.memory_total_bytes;
  description.sm_count = gpu.sm_count;
  if (gpu.compute_capability) {
    int major = 0, minor = 0;
    if (std::sscanf(gpu.compute_capability->c_str(), "%d.%d", &major, &minor) == 2) {
      description.cc_major = major;
      description.cc_minor = minor;
    }
  }
  if (gpu.sm_clock_max_hz) {
    description.max_sm_clock_mhz = static_cast<unsigned>(*gpu.sm_clock_max_hz / 1e6 + 0.5);
  }
  auto peak = peak_rates_for(description);
  if (!peak.ok()) return std::nullopt;
  return peak_record(*peak);
}

PeakRecord peak_record(const PeakRates& peak) {
  PeakRecord record;
  record.model = peak.model;
  for (const auto& [precision, rate] : peak.flops_per_s) {
    record.flops_per_s[std::string(precision_name(precision))] = rate;
  }
  record.memory_bytes_per_s = peak.memory_bandwidth_bytes_per_s;
  record.source = peak.source;
  record.estimated = peak.estimated;
  return record;
}

}  // namespace gpuscope::store
