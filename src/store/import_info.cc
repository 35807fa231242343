// `gpuscope info` as a run: what the machine was, for the report's systems table and for
// "% of peak" when a result file lacks peak rates. Its printed JSON is read back by the one
// reader of that format (info_from_json) and converted the same way.
#include <fmt/format.h>

#include "gpuscope/info.h"
#include "gpuscope/info_report.h"
#include "store/importers.h"

namespace gpuscope::store {
namespace {

using nlohmann::json;

std::optional<double> mhz_to_hz(std::optional<unsigned> mhz) {
  if (!mhz) return std::nullopt;
  return *mhz * 1e6;
}

template <typename To, typename From>
std::optional<To> optional_cast(const std::optional<From>& value) {
  if (!value) return std::nullopt;
  return static_cast<To>(*value);
}

GpuRecord gpu_record(const GpuInfo& gpu, json details) {
  GpuRecord g;
  g.gpu = static_cast<int>(gpu.index);
  g.name = gpu.name;
  g.uuid = gpu.uuid;
  g.pci_bus_id = gpu.pci_bus_id;
  if (gpu.cc_major) {
    g.compute_capability = fmt::format("{}.{}", *gpu.cc_major, gpu.cc_minor.value_or(0));
  }
  g.sm_count = gpu.sm_count;
  g.memory_total_bytes = gpu.memory_total_bytes;
  g.power_limit_w = gpu.power_limit_w;
  g.power_default_limit_w = gpu.power_default_limit_w;
  g.power_min_limit_w = gpu.power_min_limit_w;
  g.power_max_limit_w = gpu.power_max_limit_w;
  g.sm_clock_max_hz = mhz_to_hz(gpu.sm_clock_max_mhz);
  g.memory_clock_max_hz = mhz_to_hz(gpu.mem_clock_max_mhz);
  g.temperature_slowdown_c = gpu.temperature_slowdown_c;
  g.pcie_generation_max = optional_cast<int>(gpu.pcie_gen_max);
  g.pcie_width_max = optional_cast<int>(gpu.pcie_width_max);
  if (gpu.peak) g.peak = peak_record(*gpu.peak);
  g.details = std::move(details);
  return g;
}

}  // namespace

RunData info_to_run(const SystemInfo& info) {
  RunData data;
  RunRecord& run = data.run;
  run = detail::command_run("info", "gpuscope info --json", info);
  run.cuda_runtime_version = detail::cuda_version_text(info.cuda_runtime_version);
  // Each GPU's details are its record as `info --json` prints it.
  const json document = info_to_json(info);
  for (std::size_t i = 0; i < info.gpus.size(); ++i) {
    const GpuInfo& gpu = info.gpus[i];
    const int index = static_cast<int>(gpu.index);
    // A GPU that is throttled while idle is worth a look before measuring anything.
    for (const std::string& reason : gpu.clock_event_reason_names) {
      if (reason == "gpu_idle" || reason == "applications_clocks_setting") continue;
      data.findings.push_back(
          {.id = "clock_event_at_rest",
           .severity = Severity::warning,
           .title = fmt::format("GPU {} reported the clock-event reason {} when `info` read it "
                                "(before any load).",
                                index, reason),
           .gpu = index});
    }
    run.gpus.push_back(gpu_record(gpu, document["gpus"][i]));
  }
  for (const GpuFailure& failure : info.failures) {
    const int index = static_cast<int>(failure.index);
    data.findings.push_back(
        {.id = "gpu_failed",
         .severity = Severity::error,
         .title = fmt::format("GPU {} could not be read: {} ({})", index, failure.status.message(),
                              code_name(failure.status.code())),
         .gpu = index});
  }
  return data;
}

namespace detail {

std::optional<std::string> cuda_version_text(std::optional<int> version) {
  if (!version) return std::nullopt;
  return fmt::format("{}.{}", *version / 1000, (*version % 1000) / 10);
}

Result<RunData> run_from_info_json(const json& info) {
  GPUSCOPE_ASSIGN_OR_RETURN(SystemInfo read, info_from_json(info));
  return info_to_run(read);
}

}  // namespace detail
}  // namespace gpuscope::store
