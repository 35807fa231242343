// `gpuscope monitor --jsonl` files (schema 1) as one "monitor" run: a "session" line (GPUs,
// command, start), a "sample" line per GPU per tick (metrics by name, SI units), "gpu_lost"
// lines, and a last "summary".
#include <fmt/format.h>

#include <map>
#include <set>

#include "common/json_fields.h"
#include "store/importers.h"

namespace gpuscope::store::detail {
namespace {

using gpuscope::detail::JsonFields;
using nlohmann::json;

constexpr int kMonitorSchema = 1;

// Sample fields that are not readings of the GPU over time.
bool bookkeeping(const std::string& key) {
  static const std::set<std::string> kKeys = {
      "t_s", "unix_s", "gpu", "gpm_interval_s", "power_limit_w", "memory_total_bytes"};
  return kKeys.count(key) > 0;
}

}  // namespace

Result<RunData> run_from_monitor_lines(const std::vector<json>& lines) {
  RunData data;
  RunRecord& run = data.run;
  run.kind = "monitor";
  JsonFields session(lines.front(), "line 1");
  std::optional<int> version = session.opt_int("schema_version");
  if (!version || *version > kMonitorSchema) {
    return Status(Code::data_error,
                  fmt::format("monitor schema_version {} is not one this gpuscope reads (up to {})",
                              version ? std::to_string(*version) : "(missing)", kMonitorSchema));
  }
  run.started_unix_s = session.opt_number("started_unix_s").value_or(0);
  run.host = session.opt_text("host").value_or("");
  run.gpuscope_version = session.opt_text("gpuscope_version").value_or("");
  run.driver_version = session.opt_text("driver_version");
  run.cuda_driver_version = session.opt_text("cuda_driver_version");
  run.command_line = session.opt_text("command_line").value_or("gpuscope monitor");
  if (const json& command = session.member("command");
      !session.opt_text("command_line") && command.is_array() && !command.empty()) {
    run.command_line += " --";
    for (const json& word : command) {
      if (word.is_string()) run.command_line += " " + word.get<std::string>();
    }
  }
  if (auto interval = session.opt_number("interval_s")) {
    run.configurations.push_back({"monitor", {{"interval_s", *interval}}});
  }
  const json& gpus = session.member("gpus");
  for (std::size_t i = 0; gpus.is_array() && i < gpus.size(); ++i) {
    JsonFields g(gpus[i], fmt::format("line 1: gpus[{}]", i));
    GpuRecord gpu;
    gpu.gpu = g.opt_int("index").value_or(static_cast<int>(i));
    gpu.name = g.text("name");
    gpu.uuid = g.opt_text("uuid").value_or("");
    gpu.pci_bus_id = g.opt_text("pci_bus_id");
    if (auto memory = g.opt_number("memory_total_bytes")) {
      gpu.memory_total_bytes = static_cast<std::uint64_t>(*memory);
    }
    gpu.power_limit_w = g.opt_number("power_limit_w");
    if (auto gpm = g.opt_bool("gpm")) gpu.details["gpm"] = *gpm;
    GPUSCOPE_RETURN_IF_ERROR(g.status());
    run.gpus.push_back(std::move(gpu));
  }
  GPUSCOPE_RETURN_IF_ERROR(session.status());

  std::map<std::pair<int, std::string>, TelemetrySeries> series;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    JsonFields f(lines[i], fmt::format("line {}", i + 1));
    std::string type = f.text("type");
    GPUSCOPE_RETURN_IF_ERROR(f.status());
    if (type == "sample") {
      int gpu = f.opt_int("gpu").value_or(0);
      std::optional<double> t = f.opt_number("t_s");
      GPUSCOPE_RETURN_IF_ERROR(f.status());
      if (!t) continue;
      for (const auto& [key, value] : lines[i].items()) {
        if (!value.is_number() || bookkeeping(key)) continue;
        TelemetrySeries& s = series[{gpu, key}];
        if (s.metric.empty()) {
          s.gpu = gpu;
          s.metric = key;
          s.unit = std::string(names::telemetry_unit(key));
        }
        s.t_s.push_back(*t);
        s.values.push_back(value.get<double>());
      }
    } else if (type == "gpu_lost") {
      // The monitor writes what the driver said as "problems"; older files as "message".
      std::string message = f.opt_text("message").value_or("");
      if (const json& problems = f.member("problems");
          problems.is_array() && !problems.empty() && problems.front().is_string()) {
        message = problems.front().get<std::string>();
      }
      data.findings.push_back(gpu_lost_finding(f.opt_int("gpu"), f.opt_number("t_s"), message));
    } else if (type == "summary") {
      const json& summary = f.member("summary");
      if (summary.is_object() && summary.contains("wall_s") && summary["wall_s"].is_number()) {
        run.ended_unix_s = run.started_unix_s + summary["wall_s"].get<double>();
      }
    }
  }
  for (auto& [key, s] : series) data.telemetry.push_back(std::move(s));
  return data;
}

}  // namespace gpuscope::store::detail
