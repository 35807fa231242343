// gpuscope-burn-worker's JSON lines (tools/gpuscope-burn-worker/PROTOCOL.md, version 1) as one
// "burn" run, so that a recording made on a GPU machine can be reported on anywhere. The lines
// are read by burn's own reader of the protocol (burn/worker_stream.h), then converted.
#include <fmt/format.h>

#include "burn/worker_stream.h"
#include "store/importers.h"

namespace gpuscope::store::detail {
namespace {

using burn::ErrorCounts;
using burn::HostLinkRow;
using burn::MemoryRow;
using burn::OverlapRow;
using burn::SkippedTest;
using burn::WorkerError;
using burn::detail::WorkerStream;
using nlohmann::json;

template <typename T>
std::optional<T> unless_empty(const T& value) {
  if (value == T{}) return std::nullopt;
  return value;
}

GpuRecord gpu_from_device(const burn::WorkerDevice& d, const burn::detail::DeviceDetails& more) {
  GpuRecord g;
  g.gpu = 0;  // a worker sees one device
  g.name = d.name;
  g.uuid = d.uuid;
  g.pci_bus_id = unless_empty(d.pci_bus_id);
  g.compute_capability = unless_empty(d.compute_capability);
  g.sm_count = unless_empty(d.sm_count);
  g.memory_total_bytes = unless_empty(d.total_memory_bytes);
  g.sm_clock_max_hz = more.sm_clock_max_hz;
  g.memory_clock_max_hz = more.memory_clock_max_hz;
  g.peak = datasheet_peak(g);  // the worker does not know datasheets; the table does
  return g;
}

}  // namespace

Measurement gemm_errors_measurement(int gpu, std::string configuration,
                                    const std::string& precision, const burn::ErrorCounts& e) {
  Measurement m;
  m.gpu = gpu;
  m.configuration = std::move(configuration);
  m.name = names::kGemmErrors;
  m.value = static_cast<double>(e.total());
  m.unit = "count";
  m.tags = {{"precision", precision},
            {"mismatches", static_cast<double>(e.mismatches)},
            {"nan_count", static_cast<double>(e.nan_count)},
            {"inf_count", static_cast<double>(e.inf_count)},
            {"reference_tiles_failed", static_cast<double>(e.reference_tiles_failed)},
            {"gemms_checked", static_cast<double>(e.gemms_checked)}};
  return m;
}

namespace {

Measurement measure(const char* name, std::optional<double> value, const char* unit, json tags) {
  Measurement m;
  m.gpu = 0;
  m.name = name;
  m.value = value;
  m.unit = unit;
  m.tags = std::move(tags);
  return m;
}

void add_gemm_result(const burn::detail::ResultLine& r, RunData& data) {
  const std::string precision(precision_name(r.precision));
  if (r.fault_injected) {
    // A test of the detection itself: its numbers are not the GPU's, its outcome is.
    const bool caught = !r.verification_ok;
    data.findings.push_back(
        {.id = "fault_injection",
         .severity = caught ? Severity::info : Severity::error,
         .title = caught ? fmt::format("Fault injection ({}): the corrupted result was detected, "
                                       "as it must be.",
                                       precision)
                         : fmt::format("Fault injection ({}): a corrupted result went UNDETECTED.",
                                       precision),
         .gpu = 0});
    return;
  }
  const std::pair<const char*, std::optional<double>> stats[] = {
      {"median", r.median}, {"min", r.min}, {"max", r.max}, {"mean", r.mean}};
  for (const auto& [stat, value] : stats) {
    if (!value) continue;
    json tags = {{"precision", precision}, {"stat", stat}, {"n", r.n}};
    if (std::string_view(stat) == "median") tags["windows"] = r.windows;
    data.measurements.push_back(measure(names::kGemmFlopPerS, value, "FLOP/s", std::move(tags)));
  }
  const ErrorCounts& e = r.errors;
  data.measurements.push_back(gemm_errors_measurement(0, "", precision, e));
  if (!r.verification_ok) {
    data.findings.push_back(
        {.id = "verification_failed",
         .severity = Severity::error,
         .title = fmt::format(
             "{} GEMM results were wrong on GPU 0 ({} mismatched elements, {} NaN, "
             "{} Inf, {} reference tiles failed): a healthy GPU repeats itself "
             "exactly.",
             precision, e.mismatches, e.nan_count, e.inf_count, e.reference_tiles_failed),
         .gpu = 0});
  }
  if (r.partial) {
    data.findings.push_back({.id = "partial",
                             .severity = Severity::warning,
                             .title = fmt::format("The {} burn stopped early (interrupted): its "
                                                  "numbers cover fewer windows than asked for.",
                                                  precision),
                             .gpu = 0});
  }
}

void add_skipped(const SkippedTest& s, RunData& data) {
  json tags = {{"skipped", s.reason.empty() ? "skipped" : s.reason}, {"code", s.code}};
  const char* name = names::kGemmFlopPerS;
  const char* unit = "FLOP/s";
  if (s.what == "memory") {
    name = names::kMemoryBytesPerS;
    unit = "B/s";
  } else if (s.what == "host_link") {
    name = names::kHostLinkBytesPerS;
    unit = "B/s";
  } else if (s.what == "overlap") {
    name = names::kOverlapEfficiency;
    unit = "1";
  } else {
    tags["precision"] = s.what;
  }
  data.measurements.push_back(measure(name, std::nullopt, unit, std::move(tags)));
}

RunData run_from_stream(const WorkerStream& stream) {
  RunData data;
  RunRecord& run = data.run;
  run.kind = "burn";
  run.command_line = "gpuscope-burn-worker";
  run.gpus.push_back(gpu_from_device(*stream.device, stream.device_details));
  run.cuda_driver_version = cuda_version_text(stream.device_details.driver_cuda_version);
  run.cuda_runtime_version = cuda_version_text(stream.device_details.runtime_cuda_version);
  for (const burn::detail::WindowLine& w : stream.windows) {
    data.measurements.push_back(measure(names::kGemmWindowFlopPerS, w.flop_per_second, "FLOP/s",
                                        {{"precision", precision_name(w.precision)},
                                         {"window", w.index},
                                         {"t_s", w.elapsed_seconds}}));
  }
  for (const burn::detail::ResultLine& r : stream.results) add_gemm_result(r, data);
  for (const SkippedTest& s : stream.skipped) add_skipped(s, data);
  for (std::size_t i = 0; i < stream.memory.size(); ++i) {
    const MemoryRow& m = stream.memory[i];
    json tags = {{"kernel", m.kernel}, {"buffer_bytes", static_cast<double>(m.buffer_bytes)}};
    if (!stream.memory_variants[i].empty()) tags["variant"] = stream.memory_variants[i];
    data.measurements.push_back(
        measure(names::kMemoryBytesPerS, m.bytes_per_second, "B/s", std::move(tags)));
  }
  for (const HostLinkRow& h : stream.host_link) {
    data.measurements.push_back(measure(names::kHostLinkBytesPerS, h.bytes_per_second, "B/s",
                                        {{"direction", h.direction},
                                         {"memory", h.memory},
                                         {"size_bytes", static_cast<double>(h.size_bytes)}}));
  }
  for (const OverlapRow& o : stream.overlap) {
    data.measurements.push_back(
        measure(names::kOverlapEfficiency, o.efficiency, "1", {{"memory", o.memory}}));
  }
  for (const WorkerError& e : stream.errors) {
    if (e.code == "verification_failed") continue;  // already a finding from its gemm_result
    data.findings.push_back(
        {.id = e.code, .severity = Severity::error, .title = e.message, .gpu = 0});
  }
  return data;
}

}  // namespace

Result<RunData> run_from_burn_worker_lines(const std::vector<json>& lines) {
  WorkerStream stream;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Status added = burn::detail::add_object(stream, lines[i], 0);
    if (!added.ok()) return added.with_context(fmt::format("line {}", i + 1));
  }
  if (!stream.device) {
    return Status(Code::data_error, "no `device` line: not a burn worker's output");
  }
  return run_from_stream(stream);
}

}  // namespace gpuscope::store::detail
