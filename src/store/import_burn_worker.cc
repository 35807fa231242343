// gpuscope-burn-worker's JSON lines (tools/gpuscope-burn-worker/PROTOCOL.md, version 1) as one
// "burn" run, so that a recording made on a GPU machine can be reported on anywhere.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/json_fields.h"
#include "store/importers.h"

namespace gpuscope::store::detail {
namespace {

using gpuscope::detail::JsonFields;
using nlohmann::json;

constexpr int kWorkerProtocol = 1;

GpuRecord gpu_from_device(JsonFields& d) {
  GpuRecord g;
  g.gpu = 0;  // a worker sees one device
  g.name = d.text("name");
  g.uuid = d.opt_text("uuid").value_or("");
  g.pci_bus_id = d.opt_text("pci_bus_id");
  g.compute_capability = d.opt_text("compute_capability");
  g.sm_count = d.opt_int("sm_count");
  if (auto total = d.opt_number("total_memory_bytes")) {
    g.memory_total_bytes = static_cast<std::uint64_t>(*total);
  }
  g.sm_clock_max_hz = d.opt_number("sm_clock_max_hz");
  g.memory_clock_max_hz = d.opt_number("memory_clock_max_hz");

  g.peak = datasheet_peak(g);  // the worker does not know datasheets; the table does
  return g;
}

Measurement measure(const char* name, std::optional<double> value, const char* unit, json tags) {
  Measurement m;
  m.gpu = 0;
  m.name = name;
  m.value = value;
  m.unit = unit;
  m.tags = std::move(tags);
  return m;
}

void add_gemm_result(JsonFields& f, const json& line, RunData& data) {
  std::string precision = f.text("precision");
  const json& rate = f.member("flop_per_second");
  int windows = f.opt_int("windows").value_or(0);
  for (const char* stat : {"median", "min", "max", "mean"}) {
    if (!rate.is_object() || !rate.contains(stat) || !rate[stat].is_number()) continue;
    json tags = {{"precision", precision}, {"stat", stat}, {"n", line.value("n", 0)}};
    if (std::string_view(stat) == "median") tags["windows"] = windows;
    data.measurements.push_back(
        measure(names::kGemmFlopPerS, rate[stat].get<double>(), "FLOP/s", std::move(tags)));
  }
  const json& v = f.member("verification");
  if (v.is_object()) {
    auto count = [&](const char* key) { return v.value(key, 0.0); };
    double errors = count("mismatches") + count("nan_count") + count("inf_count") +
                    count("reference_tiles_failed");
    data.measurements.push_back(
        measure(names::kGemmErrors, errors, "count",
                {{"precision", precision},
                 {"mismatches", count("mismatches")},
                 {"nan_count", count("nan_count")},
                 {"inf_count", count("inf_count")},
                 {"reference_tiles_failed", count("reference_tiles_failed")},
                 {"gemms_checked", count("gemms_checked")}}));
    if (!v.value("ok", true)) {
      data.findings.push_back(
          {.id = "verification_failed",
           .severity = Severity::error,
           .title = fmt::format(
               "{} GEMM results were wrong on GPU 0 ({} mismatched elements, {} NaN, {} "
               "Inf, {} reference tiles failed){}: a healthy GPU repeats itself exactly.",
               precision, count("mismatches"), count("nan_count"), count("inf_count"),
               count("reference_tiles_failed"),
               line.value("fault_injected", false) ? " — a fault was injected on purpose" : ""),
           .gpu = 0});
    }
  }
  if (line.value("partial", false)) {
    data.findings.push_back({.id = "partial",
                             .severity = Severity::warning,
                             .title = fmt::format("The {} burn stopped early (interrupted): its "
                                                  "numbers cover fewer windows than asked for.",
                                                  precision),
                             .gpu = 0});
  }
}

}  // namespace

Result<RunData> run_from_burn_worker_lines(const std::vector<json>& lines) {
  RunData data;
  RunRecord& run = data.run;
  run.kind = "burn";
  run.command_line = "gpuscope-burn-worker";
  bool have_device = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& line = lines[i];
    JsonFields f(line, fmt::format("line {}", i + 1));
    std::optional<int> protocol = f.opt_int("v");
    std::string type = f.text("type");
    GPUSCOPE_RETURN_IF_ERROR(f.status());
    if (protocol != kWorkerProtocol) {
      return Status(Code::data_error,
                    fmt::format("line {}: burn worker protocol {} (this gpuscope reads {})", i + 1,
                                protocol.value_or(0), kWorkerProtocol));
    }
    if (type == "device") {
      // One worker prints one device line; files that gather several workers' lines (of the
      // same GPU) repeat it.
      GpuRecord gpu = gpu_from_device(f);
      bool known = std::any_of(run.gpus.begin(), run.gpus.end(),
                               [&](const GpuRecord& g) { return g.uuid == gpu.uuid; });
      if (!known && !run.gpus.empty()) {
        return Status(Code::data_error,
                      fmt::format("line {}: a second device ({}): one worker's lines describe one "
                                  "GPU",
                                  i + 1, gpu.uuid));
      }
      if (!known) run.gpus.push_back(std::move(gpu));
      std::optional<double> cuda = f.opt_number("driver_cuda_version");
      std::optional<double> runtime = f.opt_number("runtime_cuda_version");
      if (cuda)
        run.cuda_driver_version = fmt::format("{}.{}", int(*cuda) / 1000, int(*cuda) % 1000 / 10);
      if (runtime) {
        run.cuda_runtime_version =
            fmt::format("{}.{}", int(*runtime) / 1000, int(*runtime) % 1000 / 10);
      }
      have_device = true;
    } else if (type == "gemm_window") {
      data.measurements.push_back(measure(names::kGemmWindowFlopPerS,
                                          f.opt_number("flop_per_second"), "FLOP/s",
                                          {{"precision", f.text("precision")},
                                           {"window", f.opt_int("window").value_or(0)},
                                           {"t_s", f.opt_number("elapsed_seconds").value_or(0)}}));
    } else if (type == "gemm_result" && line.value("fault_injected", false)) {
      // A test of the detection itself: its numbers are not the GPU's, its outcome is.
      bool caught = !line.value("ok", true);
      data.findings.push_back(
          {.id = "fault_injection",
           .severity = caught ? Severity::info : Severity::error,
           .title =
               caught
                   ? fmt::format("Fault injection ({}): the corrupted result was detected, as it "
                                 "must be.",
                                 f.text("precision"))
                   : fmt::format("Fault injection ({}): a corrupted result went UNDETECTED.",
                                 f.text("precision")),
           .gpu = 0});
    } else if (type == "gemm_result") {
      add_gemm_result(f, line, data);
    } else if (type == "skipped") {
      std::string what = f.text("what");
      json tags = {{"skipped", f.opt_text("reason").value_or("skipped")},
                   {"code", f.opt_text("code").value_or("")}};
      const char* name = names::kGemmFlopPerS;
      const char* unit = "FLOP/s";
      if (what == "memory") {
        name = names::kMemoryBytesPerS;
        unit = "B/s";
      } else if (what == "host_link") {
        name = names::kHostLinkBytesPerS;
        unit = "B/s";
      } else if (what == "overlap") {
        name = names::kOverlapEfficiency;
        unit = "1";
      } else {
        tags["precision"] = what;
      }
      data.measurements.push_back(measure(name, std::nullopt, unit, std::move(tags)));
    } else if (type == "memory_bw") {
      json tags = {{"kernel", f.text("kernel")},
                   {"buffer_bytes", f.opt_number("buffer_bytes").value_or(0)}};
      if (auto variant = f.opt_text("variant")) tags["variant"] = *variant;
      data.measurements.push_back(measure(names::kMemoryBytesPerS, f.opt_number("bytes_per_second"),
                                          "B/s", std::move(tags)));
    } else if (type == "host_link") {
      data.measurements.push_back(
          measure(names::kHostLinkBytesPerS, f.opt_number("bytes_per_second"), "B/s",
                  {{"direction", f.text("direction")},
                   {"memory", f.text("memory")},
                   {"size_bytes", f.opt_number("size_bytes").value_or(0)}}));
    } else if (type == "overlap") {
      data.measurements.push_back(measure(names::kOverlapEfficiency, f.opt_number("efficiency"),
                                          "1", {{"memory", f.text("memory")}}));
    } else if (type == "error") {
      std::string code = f.opt_text("code").value_or("error");
      if (code != "verification_failed") {  // already a finding from its gemm_result
        data.findings.push_back({.id = code,
                                 .severity = Severity::error,
                                 .title = f.opt_text("message").value_or("the burn worker failed"),
                                 .gpu = 0});
      }
    }
    GPUSCOPE_RETURN_IF_ERROR(f.status());
  }
  if (!have_device) {
    return Status(Code::data_error, "no `device` line: not a burn worker's output");
  }
  return data;
}

}  // namespace gpuscope::store::detail
