// `gpuscope burn` as one "burn" run: each target (a GPU or a MIG instance) one GPU record, with
// the telemetry burn aggregated per precision (temperature, power, energy, throttling) as
// measurements. Its printed JSON is read back by the one reader of that format
// (burn_from_json) and converted the same way.
#include <fmt/format.h>

#include <algorithm>

#include "gpuscope/burn_report.h"
#include "gpuscope/json.h"
#include "gpuscope/precision.h"
#include "store/importers.h"

namespace gpuscope::store {
namespace {

using nlohmann::json;

Measurement measure(int gpu, const char* name, std::optional<double> value, const char* unit,
                    json tags) {
  Measurement m;
  m.gpu = gpu;
  m.configuration = "burn";
  m.name = name;
  m.value = value;
  m.unit = unit;
  m.tags = std::move(tags);
  return m;
}

void add_gemm_rows(const std::vector<burn::PrecisionRow>& rows, int gpu, RunData& data,
                   PeakRecord& peak) {
  for (const burn::PrecisionRow& r : rows) {
    const std::string precision(precision_name(r.precision));
    json tags = {{"precision", precision}};
    if (r.status != burn::RowStatus::measured) {
      const std::string status = burn::row_status_name(r.status);
      tags["skipped"] = r.note.empty() ? status : r.note;
      tags["status"] = status;
      data.measurements.push_back(measure(gpu, names::kGemmFlopPerS, std::nullopt, "FLOP/s", tags));
      continue;
    }
    const std::optional<double> median = r.flop_per_second_median;
    const std::pair<const char*, std::optional<double>> kStats[] = {
        {"median", median}, {"min", r.flop_per_second_min}, {"max", r.flop_per_second_max}};
    for (const auto& [stat, v] : kStats) {
      if (!v) continue;
      json t = tags;
      t["stat"] = stat;
      if (std::string_view(stat) == "median") {
        t["windows"] = r.windows;
        t["span_s"] = r.span_seconds;
        if (r.n) t["n"] = *r.n;
        if (r.partial) t["partial"] = true;
      }
      data.measurements.push_back(measure(gpu, names::kGemmFlopPerS, v, "FLOP/s", t));
    }
    // The report computes % of peak from the GPU's peak rates; burn wrote the fraction, so the
    // rate it compared with (scaled to a MIG instance's share of the SMs) comes back exactly.
    if (r.fraction_of_peak && median && *r.fraction_of_peak > 0) {
      peak.flops_per_s[precision] = *median / *r.fraction_of_peak;
    }
    if (median) {  // burn counts errors of the rows it timed
      data.measurements.push_back(
          detail::gemm_errors_measurement(gpu, "burn", precision, r.errors));
    }
    const std::tuple<std::optional<double>, const char*, const char*> kAggregates[] = {
        {r.temperature_max_c, names::kTemperatureMax, "degC"},
        {r.temperature_start_c, names::kTemperatureStart, "degC"},
        {r.power_average_w, names::kPowerAvg, "W"},
        {r.energy_j, names::kEnergy, "J"},
        {r.flop_per_joule, names::kFlopPerJoule, "FLOP/J"},
        {r.sm_clock_average_hz, names::kSmClockAvg, "Hz"},
        {r.sm_activity, names::kSmActivityAvg, "1"},
        {r.tensor_activity, names::kTensorActivityAvg, "1"},
    };
    for (const auto& [v, name, unit] : kAggregates) {
      if (!v) continue;
      json t = tags;
      if (name == names::kEnergy) t["source"] = r.energy_source;
      data.measurements.push_back(measure(gpu, name, v, unit, t));
    }
    // By reason, as the JSON document orders them.
    std::vector<burn::ThrottleTime> throttle = r.throttle;
    std::sort(throttle.begin(), throttle.end(),
              [](const auto& a, const auto& b) { return a.reason < b.reason; });
    for (const burn::ThrottleTime& t : throttle) {
      data.measurements.push_back(
          measure(gpu, names::kThrottleSeconds, t.seconds, "s",
                  {{"precision", precision}, {"reason", t.reason}, {"estimated", t.estimated}}));
    }
  }
}

void add_target(const burn::TargetResult& t, int gpu, RunData& data) {
  const burn::Target& target = t.target;
  GpuRecord g;
  g.gpu = gpu;
  // A worker that failed to start never described its device.
  const burn::WorkerDevice* device = t.device ? &*t.device : nullptr;
  g.name = device != nullptr && !device->name.empty() ? device->name : target.gpu_name;
  g.uuid = device != nullptr && !device->uuid.empty() ? device->uuid : target.gpu_uuid;
  g.pci_bus_id = target.pci_bus_id;
  if (device != nullptr) {
    if (!device->compute_capability.empty()) g.compute_capability = device->compute_capability;
    g.sm_count = device->sm_count;
    g.memory_total_bytes = device->total_memory_bytes;
  }
  const std::string label = target.label();
  g.details = {
      {"label", label}, {"gpu_index", target.gpu_index}, {"visible_devices", target.uuid()}};
  if (target.mig) {
    json mig = {{"gpu_instance_id", target.mig->gpu_instance_id},
                {"compute_instance_id", target.mig->compute_instance_id},
                {"profile", target.mig->profile},
                {"name", target.name},
                {"uuid", target.mig->uuid}};
    put(mig, "sm_count", target.sm_count);
    put(mig, "memory_total_bytes", target.memory_total_bytes);
    g.details["mig"] = std::move(mig);
    // "NVIDIA A100-SXM4-40GB MIG 3g.20gb": the slice, not the whole GPU, is what ran.
    g.name = target.name;
  }

  PeakRecord peak;
  if (target.peak) {
    peak.model = target.peak->model;
    peak.estimated = target.peak->estimated;
  }
  peak.source = target.peak_note.empty() ? "gpuscope burn's peak rates" : target.peak_note;
  add_gemm_rows(t.gemm, gpu, data, peak);

  for (const burn::MemoryRow& m : t.memory) {
    data.measurements.push_back(
        measure(gpu, names::kMemoryBytesPerS, m.bytes_per_second, "B/s",
                {{"kernel", m.kernel}, {"buffer_bytes", static_cast<double>(m.buffer_bytes)}}));
    if (m.kernel == "copy" && m.fraction_of_peak && *m.fraction_of_peak > 0) {
      peak.memory_bytes_per_s = m.bytes_per_second / *m.fraction_of_peak;
    }
  }
  for (const burn::HostLinkRow& h : t.host_link) {
    data.measurements.push_back(measure(gpu, names::kHostLinkBytesPerS, h.bytes_per_second, "B/s",
                                        {{"direction", h.direction},
                                         {"memory", h.memory},
                                         {"size_bytes", static_cast<double>(h.size_bytes)}}));
  }
  for (const burn::OverlapRow& o : t.overlap) {
    data.measurements.push_back(
        measure(gpu, names::kOverlapEfficiency, o.efficiency, "1", {{"memory", o.memory}}));
  }
  for (const burn::SkippedTest& s : t.skipped) {
    const char* name = s.what == "memory"      ? names::kMemoryBytesPerS
                       : s.what == "host_link" ? names::kHostLinkBytesPerS
                       : s.what == "overlap"   ? names::kOverlapEfficiency
                                               : nullptr;
    if (name == nullptr) continue;  // a precision: its gemm row says so already
    data.measurements.push_back(
        measure(gpu, name, std::nullopt, s.what == "overlap" ? "1" : "B/s",
                {{"skipped", s.reason.empty() ? "skipped" : s.reason}, {"code", s.code}}));
  }
  for (const burn::WorkerError& e : t.errors) {
    data.findings.push_back({.id = e.code.empty() ? "error" : e.code,
                             .severity = Severity::error,
                             .title = fmt::format("{}: {}", label, e.message),
                             .gpu = gpu});
  }
  if (t.outcome == burn::Outcome::failed) {
    data.findings.push_back(
        {.id = "worker_failed",
         .severity = Severity::error,
         .title = fmt::format("{}: {}", label, t.failure.empty() ? "failed" : t.failure),
         .gpu = gpu});
  } else if (t.outcome == burn::Outcome::interrupted) {
    data.findings.push_back(
        {.id = "interrupted",
         .severity = Severity::warning,
         .title = fmt::format("{}: interrupted; what was measured is kept", label),
         .gpu = gpu});
  }
  for (const std::string& w : t.warnings) {
    data.findings.push_back({.id = "burn_warning",
                             .severity = Severity::info,
                             .title = fmt::format("{}: {}", label, w),
                             .gpu = gpu});
  }
  if (!peak.flops_per_s.empty() || peak.memory_bytes_per_s) {
    g.peak = std::move(peak);
  } else {
    g.peak = datasheet_peak(g);
  }
  data.run.gpus.push_back(std::move(g));
}

}  // namespace

RunData burn_to_run(const burn::Report& report) {
  RunData data;
  data.run = detail::command_run("burn", "gpuscope burn --json", report);
  data.run.configurations.push_back({"burn", burn_options_to_json(report.options)});
  for (std::size_t i = 0; i < report.targets.size(); ++i) {
    add_target(report.targets[i], static_cast<int>(i), data);
  }
  if (report.interrupted) {
    data.findings.push_back(
        {.id = "interrupted",
         .severity = Severity::warning,
         .title = "The burn was interrupted (Ctrl-C): some precisions did not run."});
  }
  return data;
}

namespace detail {

Result<RunData> run_from_burn_json(const json& report) {
  GPUSCOPE_ASSIGN_OR_RETURN(burn::Report read, burn_from_json(report));
  return burn_to_run(read);
}

}  // namespace detail
}  // namespace gpuscope::store
