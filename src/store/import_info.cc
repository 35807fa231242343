// `gpuscope info --json` as a run: what the machine was, for the report's systems table and for
// "% of peak" when a result file lacks peak rates.
#include <fmt/format.h>

#include "gpuscope/info_report.h"
#include "store/importers.h"
#include "store/json_fields.h"
#include "store/record_json.h"

namespace gpuscope::store::detail {
namespace {

using nlohmann::json;

// 13000 -> "13.0", as nvidia-smi prints it.
std::optional<std::string> cuda_version_text(std::optional<double> version) {
  if (!version) return std::nullopt;
  int v = static_cast<int>(*version);
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::optional<double> mhz_to_hz(std::optional<double> mhz) {
  if (!mhz) return std::nullopt;
  return *mhz * 1e6;
}

Result<GpuRecord> gpu_from_info(const json& in, std::size_t i) {
  JsonFields f(in, fmt::format("gpus[{}]", i));
  GpuRecord g;
  g.gpu = f.opt_int("index").value_or(static_cast<int>(i));
  g.name = f.text("name");
  g.uuid = f.opt_text("uuid").value_or("");
  g.pci_bus_id = f.opt_text("pci_bus_id");
  g.compute_capability = f.opt_text("compute_capability");
  g.sm_count = f.opt_int("sm_count");
  JsonFields memory(f.member("memory"), f.where() + ".memory");
  if (auto total = memory.opt_number("total_bytes")) {
    g.memory_total_bytes = static_cast<std::uint64_t>(*total);
  }
  JsonFields power(f.member("power"), f.where() + ".power");
  g.power_limit_w = power.opt_number("limit_w");
  g.power_default_limit_w = power.opt_number("default_limit_w");
  g.power_min_limit_w = power.opt_number("min_limit_w");
  g.power_max_limit_w = power.opt_number("max_limit_w");
  JsonFields clocks(f.member("clocks"), f.where() + ".clocks");
  g.sm_clock_max_hz = mhz_to_hz(clocks.opt_number("sm_max_mhz"));
  g.memory_clock_max_hz = mhz_to_hz(clocks.opt_number("memory_max_mhz"));
  JsonFields temperature(f.member("temperature"), f.where() + ".temperature");
  g.temperature_slowdown_c = temperature.opt_number("slowdown_c");
  JsonFields pcie(f.member("pcie"), f.where() + ".pcie");
  g.pcie_generation_max = pcie.opt_int("generation_max");
  g.pcie_width_max = pcie.opt_int("width_max");
  for (const JsonFields* part : {&f, &memory, &power, &clocks, &temperature, &pcie}) {
    GPUSCOPE_RETURN_IF_ERROR(part->status());
  }
  if (const json& peak = f.member("peak"); !peak.is_null()) {
    GPUSCOPE_ASSIGN_OR_RETURN(g.peak, peak_from_json(peak));
  }
  g.details = in;
  return g;
}

}  // namespace

Result<RunData> run_from_info_json(const json& info) {
  JsonFields top(info, "info");
  std::optional<int> version = top.opt_int("schema_version");
  JsonFields host(top.member("host"), "info.host");
  RunData data;
  RunRecord& run = data.run;
  run.kind = "info";
  run.command_line = "gpuscope info --json";
  run.host = host.opt_text("hostname").value_or("");
  run.gpuscope_version = host.opt_text("gpuscope_version").value_or("");
  run.driver_version = host.opt_text("driver_version");
  run.cuda_driver_version = cuda_version_text(host.opt_number("cuda_driver_version"));
  run.cuda_runtime_version = cuda_version_text(host.opt_number("cuda_runtime_version"));
  GPUSCOPE_RETURN_IF_ERROR(top.status());
  GPUSCOPE_RETURN_IF_ERROR(host.status());
  if (!version || *version > kInfoSchemaVersion) {
    return Status(Code::data_error, fmt::format("info schema_version {} is not one this gpuscope "
                                                "reads (up to {})",
                                                version ? std::to_string(*version) : "(missing)",
                                                kInfoSchemaVersion));
  }
  const json& gpus = top.member("gpus");
  for (std::size_t i = 0; gpus.is_array() && i < gpus.size(); ++i) {
    GPUSCOPE_ASSIGN_OR_RETURN(GpuRecord g, gpu_from_info(gpus[i], i));
    // A GPU that is throttled while idle is worth a look before measuring anything.
    const json& details = g.details;
    json reasons = details.contains("clock_event_reasons")
                       ? details["clock_event_reasons"].value("active", json::array())
                       : json::array();
    for (const json& reason : reasons) {
      if (!reason.is_string()) continue;
      std::string name = reason.get<std::string>();
      if (name == "gpu_idle" || name == "applications_clocks_setting") continue;
      data.findings.push_back(
          {.id = "clock_event_at_rest",
           .severity = Severity::warning,
           .title = fmt::format("GPU {} reported the clock-event reason {} when `info` read it "
                                "(before any load).",
                                g.gpu, name),
           .gpu = g.gpu});
    }
    run.gpus.push_back(std::move(g));
  }
  const json& failures = top.member("failures");
  for (std::size_t i = 0; failures.is_array() && i < failures.size(); ++i) {
    JsonFields f(failures[i], fmt::format("failures[{}]", i));
    std::optional<int> index = f.opt_int("index");
    std::string code = f.opt_text("error").value_or("error");
    std::string message = f.opt_text("message").value_or("");
    GPUSCOPE_RETURN_IF_ERROR(f.status());
    data.findings.push_back(
        {.id = "gpu_failed",
         .severity = Severity::error,
         .title = fmt::format("GPU {} could not be read: {} ({})",
                              index ? std::to_string(*index) : "?", message, code),
         .gpu = index});
  }
  return data;
}

}  // namespace gpuscope::store::detail
