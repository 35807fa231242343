// `gpuscope burn --json` (schema 1, pinned by tests/fixtures/burn/burn_schema_v1.json) as one
// "burn" run: each target (a GPU or a MIG instance) one GPU record, with the telemetry burn
// aggregated per precision (temperature, power, energy, throttling) as measurements.
#include <fmt/format.h>

#include <algorithm>

#include "common/json_fields.h"
#include "store/importers.h"

namespace gpuscope::store::detail {
namespace {

using gpuscope::detail::JsonFields;
using nlohmann::json;

constexpr int kBurnSchema = 1;

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

std::optional<std::string> cuda_text(std::optional<double> version) {
  if (!version) return std::nullopt;
  int v = static_cast<int>(*version);
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

Status add_gemm_rows(const json& rows, int gpu, const std::string& where, RunData& data,
                     PeakRecord& peak) {
  for (std::size_t k = 0; rows.is_array() && k < rows.size(); ++k) {
    JsonFields r(rows[k], fmt::format("{}.gemm[{}]", where, k));
    std::string precision = r.text("precision");
    std::string status = r.opt_text("status").value_or("measured");
    GPUSCOPE_RETURN_IF_ERROR(r.status());
    json tags = {{"precision", precision}};
    if (status != "measured") {
      tags["skipped"] = r.opt_text("note").value_or(status);
      tags["status"] = status;
      data.measurements.push_back(measure(gpu, names::kGemmFlopPerS, std::nullopt, "FLOP/s", tags));
      continue;
    }
    JsonFields rate(r.member("flop_per_s"), r.where() + ".flop_per_s");
    std::optional<double> median = rate.opt_number("median");
    for (const char* stat : {"median", "min", "max"}) {
      std::optional<double> v = rate.opt_number(stat);
      if (!v) continue;
      json t = tags;
      t["stat"] = stat;
      if (std::string_view(stat) == "median") {
        t["windows"] = r.opt_int("windows").value_or(0);
        if (auto span = r.opt_number("span_seconds")) t["span_s"] = *span;
        if (auto n = r.opt_int("n")) t["n"] = *n;
        if (r.opt_bool("partial").value_or(false)) t["partial"] = true;
      }
      data.measurements.push_back(measure(gpu, names::kGemmFlopPerS, v, "FLOP/s", t));
    }
    // The report computes % of peak from the GPU's peak rates; burn wrote the fraction, so the
    // rate it compared with (scaled to a MIG instance's share of the SMs) comes back exactly.
    if (auto fraction = r.opt_number("fraction_of_peak"); fraction && median && *fraction > 0) {
      peak.flops_per_s[precision] = *median / *fraction;
    }
    JsonFields errors(r.member("errors"), r.where() + ".errors");
    if (auto total = errors.opt_number("total")) {
      data.measurements.push_back(measure(
          gpu, names::kGemmErrors, total, "count",
          {{"precision", precision},
           {"mismatches", errors.opt_number("mismatches").value_or(0)},
           {"nan_count", errors.opt_number("nan_count").value_or(0)},
           {"inf_count", errors.opt_number("inf_count").value_or(0)},
           {"reference_tiles_failed", errors.opt_number("reference_tiles_failed").value_or(0)},
           {"gemms_checked", errors.opt_number("gemms_checked").value_or(0)}}));
    }
    const std::pair<const char*, std::pair<const char*, const char*>> kAggregates[] = {
        {"temperature_max_c", {names::kTemperatureMax, "degC"}},
        {"temperature_start_c", {names::kTemperatureStart, "degC"}},
        {"power_average_w", {names::kPowerAvg, "W"}},
        {"energy_j", {names::kEnergy, "J"}},
        {"flop_per_joule", {names::kFlopPerJoule, "FLOP/J"}},
        {"sm_clock_average_hz", {names::kSmClockAvg, "Hz"}},
        {"sm_activity", {names::kSmActivityAvg, "1"}},
        {"tensor_activity", {names::kTensorActivityAvg, "1"}},
    };
    for (const auto& [key, name_unit] : kAggregates) {
      if (auto v = r.opt_number(key)) {
        json t = tags;
        if (std::string_view(key) == "energy_j") {
          t["source"] = r.opt_text("energy_source").value_or("");
        }
        data.measurements.push_back(measure(gpu, name_unit.first, v, name_unit.second, t));
      }
    }
    const json& estimated = r.member("throttle_estimated_from_samples");
    const json& throttle = r.member("throttle_seconds");
    if (throttle.is_object()) {
      for (const auto& [reason, seconds] : throttle.items()) {
        if (!seconds.is_number()) continue;
        bool guessed = estimated.is_array() &&
                       std::find(estimated.begin(), estimated.end(), reason) != estimated.end();
        data.measurements.push_back(
            measure(gpu, names::kThrottleSeconds, seconds.get<double>(), "s",
                    {{"precision", precision}, {"reason", reason}, {"estimated", guessed}}));
      }
    }
    GPUSCOPE_RETURN_IF_ERROR(rate.status());
    GPUSCOPE_RETURN_IF_ERROR(errors.status());
    GPUSCOPE_RETURN_IF_ERROR(r.status());
  }
  return Status{};
}

Status add_target(const json& target, int gpu, RunData& data) {
  std::string where = fmt::format("targets[{}]", gpu);
  JsonFields t(target, where);
  // A worker that failed to start never described its device.
  static const json kNone = json::object();
  const json& device_json = t.member("device");
  JsonFields device(device_json.is_object() ? device_json : kNone, where + ".device");
  GpuRecord g;
  g.gpu = gpu;
  g.name = device.opt_text("name").value_or(t.opt_text("gpu_name").value_or(""));
  g.uuid = device.opt_text("uuid").value_or(t.opt_text("gpu_uuid").value_or(""));
  g.pci_bus_id = t.opt_text("pci_bus_id");
  g.compute_capability = device.opt_text("compute_capability");
  g.sm_count = device.opt_int("sm_count");
  if (auto memory = device.opt_number("total_memory_bytes")) {
    g.memory_total_bytes = static_cast<std::uint64_t>(*memory);
  }
  std::string label = t.opt_text("label").value_or(fmt::format("target {}", gpu));
  g.details = {{"label", label},
               {"gpu_index", t.opt_int("gpu_index").value_or(gpu)},
               {"visible_devices", t.opt_text("visible_devices").value_or("")}};
  if (const json& mig = t.member("mig"); mig.is_object()) {
    g.details["mig"] = mig;
    // "NVIDIA A100-SXM4-40GB MIG 3g.20gb": the slice, not the whole GPU, is what ran.
    if (mig.contains("name") && mig["name"].is_string()) g.name = mig["name"].get<std::string>();
  }
  GPUSCOPE_RETURN_IF_ERROR(device.status());
  GPUSCOPE_RETURN_IF_ERROR(t.status());

  PeakRecord peak;
  const json& peak_json = t.member("peak");
  JsonFields peak_fields(peak_json.is_object() ? peak_json : kNone, where + ".peak");
  peak.model = peak_fields.opt_text("model").value_or("");
  peak.estimated = peak_fields.opt_bool("estimated").value_or(false);
  peak.source = t.opt_text("peak_note").value_or("gpuscope burn's peak rates");
  GPUSCOPE_RETURN_IF_ERROR(add_gemm_rows(t.member("gemm"), gpu, where, data, peak));

  const json& memory = t.member("memory");
  for (std::size_t k = 0; memory.is_array() && k < memory.size(); ++k) {
    JsonFields m(memory[k], fmt::format("{}.memory[{}]", where, k));
    std::optional<double> rate = m.opt_number("bytes_per_s");
    std::string kernel = m.text("kernel");
    data.measurements.push_back(
        measure(gpu, names::kMemoryBytesPerS, rate, "B/s",
                {{"kernel", kernel}, {"buffer_bytes", m.opt_number("buffer_bytes").value_or(0)}}));
    auto fraction = m.opt_number("fraction_of_peak");
    if (kernel == "copy" && rate && fraction && *fraction > 0) {
      peak.memory_bytes_per_s = *rate / *fraction;
    }
    GPUSCOPE_RETURN_IF_ERROR(m.status());
  }
  const json& host_link = t.member("host_link");
  for (std::size_t k = 0; host_link.is_array() && k < host_link.size(); ++k) {
    JsonFields h(host_link[k], fmt::format("{}.host_link[{}]", where, k));
    data.measurements.push_back(measure(gpu, names::kHostLinkBytesPerS, h.opt_number("bytes_per_s"),
                                        "B/s",
                                        {{"direction", h.text("direction")},
                                         {"memory", h.text("memory")},
                                         {"size_bytes", h.opt_number("size_bytes").value_or(0)}}));
    GPUSCOPE_RETURN_IF_ERROR(h.status());
  }
  const json& overlap = t.member("overlap");
  for (std::size_t k = 0; overlap.is_array() && k < overlap.size(); ++k) {
    JsonFields o(overlap[k], fmt::format("{}.overlap[{}]", where, k));
    data.measurements.push_back(measure(gpu, names::kOverlapEfficiency, o.opt_number("efficiency"),
                                        "1", {{"memory", o.text("memory")}}));
    GPUSCOPE_RETURN_IF_ERROR(o.status());
  }
  const json& skipped = t.member("skipped");
  for (std::size_t k = 0; skipped.is_array() && k < skipped.size(); ++k) {
    JsonFields s(skipped[k], fmt::format("{}.skipped[{}]", where, k));
    std::string what = s.text("what");
    json tags = {{"skipped", s.opt_text("reason").value_or("skipped")},
                 {"code", s.opt_text("code").value_or("")}};
    const char* name = what == "memory"      ? names::kMemoryBytesPerS
                       : what == "host_link" ? names::kHostLinkBytesPerS
                       : what == "overlap"   ? names::kOverlapEfficiency
                                             : nullptr;
    if (name == nullptr) continue;  // a precision: its gemm row says so already
    data.measurements.push_back(
        measure(gpu, name, std::nullopt, what == "overlap" ? "1" : "B/s", std::move(tags)));
  }
  const json& errors = t.member("errors");
  for (std::size_t k = 0; errors.is_array() && k < errors.size(); ++k) {
    JsonFields e(errors[k], fmt::format("{}.errors[{}]", where, k));
    data.findings.push_back(
        {.id = e.opt_text("code").value_or("error"),
         .severity = Severity::error,
         .title = fmt::format("{}: {}", label, e.opt_text("message").value_or("")),
         .gpu = gpu});
  }
  std::string outcome = t.opt_text("outcome").value_or("");
  if (outcome == "failed") {
    data.findings.push_back(
        {.id = "worker_failed",
         .severity = Severity::error,
         .title = fmt::format("{}: {}", label, t.opt_text("failure").value_or("failed")),
         .gpu = gpu});
  } else if (outcome == "interrupted") {
    data.findings.push_back(
        {.id = "interrupted",
         .severity = Severity::warning,
         .title = fmt::format("{}: interrupted; what was measured is kept", label),
         .gpu = gpu});
  }
  const json& warnings = t.member("warnings");
  for (const json& w : warnings) {
    if (w.is_string()) {
      data.findings.push_back({.id = "burn_warning",
                               .severity = Severity::info,
                               .title = fmt::format("{}: {}", label, w.get<std::string>()),
                               .gpu = gpu});
    }
  }
  if (!peak.flops_per_s.empty() || peak.memory_bytes_per_s) {
    g.peak = std::move(peak);
  } else {
    g.peak = datasheet_peak(g);
  }
  data.run.gpus.push_back(std::move(g));
  return Status{};
}

}  // namespace

Result<RunData> run_from_burn_json(const json& report) {
  JsonFields top(report, "burn");
  std::optional<int> version = top.opt_int("schema_version");
  if (!version || *version > kBurnSchema) {
    return Status(Code::data_error,
                  fmt::format("burn schema_version {} is not one this gpuscope reads (up to {})",
                              version ? std::to_string(*version) : "(missing)", kBurnSchema));
  }
  JsonFields host(top.member("host"), "burn.host");
  RunData data;
  RunRecord& run = data.run;
  run.kind = "burn";
  run.command_line = "gpuscope burn --json";
  run.host = host.opt_text("hostname").value_or("");
  run.gpuscope_version = host.opt_text("gpuscope_version").value_or("");
  run.driver_version = host.opt_text("driver_version");
  run.cuda_driver_version = cuda_text(host.opt_number("cuda_driver_version"));
  if (const json& options = top.member("options"); options.is_object()) {
    run.configurations.push_back({"burn", options});
  } else {
    run.configurations.push_back({"burn", json::object()});
  }
  GPUSCOPE_RETURN_IF_ERROR(host.status());
  const json& targets = top.member("targets");
  for (std::size_t i = 0; targets.is_array() && i < targets.size(); ++i) {
    GPUSCOPE_RETURN_IF_ERROR(add_target(targets[i], static_cast<int>(i), data));
  }
  if (top.opt_bool("interrupted").value_or(false)) {
    data.findings.push_back(
        {.id = "interrupted",
         .severity = Severity::warning,
         .title = "The burn was interrupted (Ctrl-C): some precisions did not run."});
  }
  GPUSCOPE_RETURN_IF_ERROR(top.status());
  return data;
}

}  // namespace gpuscope::store::detail
