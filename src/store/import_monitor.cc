// `gpuscope monitor --jsonl` files (schema 1) as one "monitor" run: read by the format's one
// reader (telemetry::recording_from_lines), the session's GPUs become GPU records, each
// catalogue metric of the samples a telemetry series per GPU, a lost GPU a finding, and the
// summary's wall time the run's end.
#include <fmt/format.h>

#include <map>

#include "gpuscope/monitor.h"
#include "store/importers.h"

namespace gpuscope::store::detail {
namespace {

// Catalogue metrics that describe the GPU rather than read it over time.
bool bookkeeping(telemetry::Metric metric) {
  return metric == telemetry::Metric::power_limit_w ||
         metric == telemetry::Metric::memory_total_bytes;
}

}  // namespace

Result<RunData> run_from_monitor_lines(const std::vector<nlohmann::json>& lines) {
  GPUSCOPE_ASSIGN_OR_RETURN(telemetry::Recording recording, telemetry::recording_from_lines(lines));
  const telemetry::SessionInfo& session = recording.session;
  RunData data;
  RunRecord& run = data.run;
  run = telemetry::monitor_run_record(session);
  if (run.command_line.empty()) {
    run.command_line = "gpuscope monitor";
    if (!session.command.empty()) run.command_line += " --";
    for (const std::string& word : session.command) run.command_line += " " + word;
  }
  if (session.interval_s > 0) {
    run.configurations.push_back({"monitor", {{"interval_s", session.interval_s}}});
  }
  for (std::size_t i = 0; i < run.gpus.size(); ++i)
    run.gpus[i].details["gpm"] = session.gpus[i].gpm;

  std::map<std::pair<int, std::string>, TelemetrySeries> series;
  for (const telemetry::GpuSample& sample : recording.samples) {
    const int gpu = static_cast<int>(sample.gpu);
    if (sample.lost) {
      data.findings.push_back(gpu_lost_finding(
          gpu, sample.t_s, sample.problems.empty() ? "" : sample.problems.front()));
      continue;
    }
    for (const telemetry::MetricInfo& info : telemetry::metric_catalogue()) {
      const std::optional<double> value = sample.values.get(info.metric);
      if (!value || bookkeeping(info.metric)) continue;
      const std::string name(info.name);
      TelemetrySeries& s = series[{gpu, name}];
      if (s.metric.empty()) {
        s.gpu = gpu;
        s.metric = name;
        s.unit = std::string(names::telemetry_unit(name));
      }
      s.t_s.push_back(sample.t_s);
      s.values.push_back(*value);
    }
  }
  if (recording.summary && recording.summary->contains("wall_s") &&
      (*recording.summary)["wall_s"].is_number()) {
    run.ended_unix_s = run.started_unix_s + (*recording.summary)["wall_s"].get<double>();
  }
  for (auto& [key, s] : series) data.telemetry.push_back(std::move(s));
  return data;
}

}  // namespace gpuscope::store::detail
