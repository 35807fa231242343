// The "gpuscope.records" JSON format: runs as plain JSON, for fixtures and exchange.
#include <fmt/format.h>

#include "common/json_fields.h"
#include "gpuscope/json.h"
#include "gpuscope/store.h"
#include "store/record_json.h"

namespace gpuscope::store {
namespace {

using gpuscope::detail::JsonFields;
using nlohmann::json;

json run_to_json(const RunRecord& r) {
  json out = {{"id", r.id},
              {"kind", r.kind},
              {"started_unix_s", r.started_unix_s},
              {"host", r.host},
              {"command_line", r.command_line},
              {"gpuscope_version", r.gpuscope_version}};
  put(out, "ended_unix_s", r.ended_unix_s);
  put(out, "driver_version", r.driver_version);
  put(out, "cuda_driver_version", r.cuda_driver_version);
  put(out, "cuda_runtime_version", r.cuda_runtime_version);
  put(out, "torch_version", r.torch_version);
  put(out, "label", r.label);
  return out;
}

json gpu_to_json(const GpuRecord& g) {
  json out = {{"gpu", g.gpu}, {"name", g.name}, {"uuid", g.uuid}};
  put(out, "pci_bus_id", g.pci_bus_id);
  put(out, "compute_capability", g.compute_capability);
  put(out, "sm_count", g.sm_count);
  put(out, "memory_total_bytes", g.memory_total_bytes);
  put(out, "power_limit_w", g.power_limit_w);
  put(out, "power_default_limit_w", g.power_default_limit_w);
  put(out, "power_min_limit_w", g.power_min_limit_w);
  put(out, "power_max_limit_w", g.power_max_limit_w);
  put(out, "sm_clock_max_hz", g.sm_clock_max_hz);
  put(out, "memory_clock_max_hz", g.memory_clock_max_hz);
  put(out, "temperature_slowdown_c", g.temperature_slowdown_c);
  put(out, "pcie_generation_max", g.pcie_generation_max);
  put(out, "pcie_width_max", g.pcie_width_max);
  if (g.peak) out["peak"] = detail::peak_to_json(*g.peak);
  if (!g.details.is_null() && !g.details.empty()) out["details"] = g.details;
  return out;
}

json measurement_to_json(const Measurement& m) {
  json out = {{"name", m.name}, {"unit", m.unit}};
  put(out, "gpu", m.gpu);
  if (!m.configuration.empty()) out["configuration"] = m.configuration;
  out["value"] = m.value ? json(*m.value) : json(nullptr);
  if (!m.tags.is_null() && !m.tags.empty()) out["tags"] = m.tags;
  return out;
}

Status gpu_from_json(JsonFields& f, std::size_t index, GpuRecord& g) {
  g.gpu = f.opt_int("gpu").value_or(static_cast<int>(index));
  g.name = f.text("name");
  g.uuid = f.opt_text("uuid").value_or("");
  g.pci_bus_id = f.opt_text("pci_bus_id");
  g.compute_capability = f.opt_text("compute_capability");
  g.sm_count = f.opt_int("sm_count");
  if (auto memory = f.opt_number("memory_total_bytes")) {
    g.memory_total_bytes = static_cast<std::uint64_t>(*memory);
  }
  g.power_limit_w = f.opt_number("power_limit_w");
  g.power_default_limit_w = f.opt_number("power_default_limit_w");
  g.power_min_limit_w = f.opt_number("power_min_limit_w");
  g.power_max_limit_w = f.opt_number("power_max_limit_w");
  g.sm_clock_max_hz = f.opt_number("sm_clock_max_hz");
  g.memory_clock_max_hz = f.opt_number("memory_clock_max_hz");
  g.temperature_slowdown_c = f.opt_number("temperature_slowdown_c");
  g.pcie_generation_max = f.opt_int("pcie_generation_max");
  g.pcie_width_max = f.opt_int("pcie_width_max");
  if (const json& peak = f.member("peak"); !peak.is_null()) {
    auto parsed = detail::peak_from_json(peak);
    if (!parsed.ok()) return parsed.status().with_context(f.where());
    g.peak = *parsed;
  }
  if (const json& details = f.member("details"); details.is_object()) g.details = details;
  return Status{};
}

Status configuration_from_json(JsonFields& f, std::size_t /*index*/, Configuration& c) {
  c.name = f.text("name");
  if (const json& params = f.member("params"); params.is_object()) c.params = params;
  return Status{};
}

Status measurement_from_json(JsonFields& f, std::size_t /*index*/, Measurement& m) {
  m.gpu = f.opt_int("gpu");
  m.configuration = f.opt_text("configuration").value_or("");
  m.name = f.text("name");
  m.value = f.opt_number("value");
  m.unit = f.opt_text("unit").value_or("");
  if (const json& tags = f.member("tags"); tags.is_object()) m.tags = tags;
  return Status{};
}

Status series_from_json(JsonFields& f, std::size_t /*index*/, TelemetrySeries& s) {
  s.gpu = f.opt_int("gpu").value_or(0);
  s.metric = f.text("metric");
  s.unit = f.opt_text("unit").value_or(std::string(names::telemetry_unit(s.metric)));
  const json& t = f.member("t_s");
  const json& values = f.member("values");
  if (!t.is_array() || !values.is_array() || t.size() != values.size()) {
    f.fail("t_s", "expected arrays t_s and values of the same length");
  }
  GPUSCOPE_RETURN_IF_ERROR(f.status());
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!t[k].is_number() || !values[k].is_number()) {
      f.fail(fmt::format("[{}]", k), "expected numbers");
      return f.status();
    }
    s.t_s.push_back(t[k].get<double>());
    s.values.push_back(values[k].get<double>());
  }
  return Status{};
}

Status finding_from_json(JsonFields& f, std::size_t /*index*/, Finding& finding) {
  finding.gpu = f.opt_int("gpu");
  std::string severity = f.text("severity");
  if (auto parsed = detail::parse_severity(severity)) {
    finding.severity = *parsed;
  } else if (f.status().ok()) {
    f.fail("severity", "expected info, warning or error");
  }
  finding.id = f.opt_text("code").value_or("");
  finding.title = f.text("text");
  GPUSCOPE_RETURN_IF_ERROR(f.status());
  if (!detail::read_finding_details(f.object(), finding)) {
    return Status(Code::data_error, fmt::format("{}: malformed evidence, fix, expected_speedup, "
                                                "confidence or subjects",
                                                f.where()));
  }
  return Status{};
}

// Each object of the list `key` of `top` read by `read` into a record appended to `out`, its
// fields named "<where>.<key>[i]"; the first problem stops it. An absent member, or one that is
// not a list, reads as none.
template <typename Record>
Status read_list(JsonFields& top, const char* key, const std::string& where,
                 Status (*read)(JsonFields&, std::size_t, Record&), std::vector<Record>& out) {
  const json& list = top.member(key);
  for (std::size_t i = 0; i < list.size() && list.is_array(); ++i) {
    JsonFields f(list[i], fmt::format("{}.{}[{}]", where, key, i));
    Record record;
    GPUSCOPE_RETURN_IF_ERROR(read(f, i, record));
    GPUSCOPE_RETURN_IF_ERROR(f.status());
    out.push_back(std::move(record));
  }
  return Status{};
}

Result<RunData> run_from_json(const json& in, const std::string& where) {
  RunData data;
  JsonFields top(in, where);
  JsonFields r(top.member("run"), where + ".run");
  RunRecord& run = data.run;
  run.id = r.opt_int("id").value_or(0);
  run.kind = r.text("kind");
  run.started_unix_s = r.number("started_unix_s");
  run.ended_unix_s = r.opt_number("ended_unix_s");
  run.host = r.opt_text("host").value_or("");
  run.command_line = r.opt_text("command_line").value_or("");
  run.gpuscope_version = r.opt_text("gpuscope_version").value_or("");
  run.driver_version = r.opt_text("driver_version");
  run.cuda_driver_version = r.opt_text("cuda_driver_version");
  run.cuda_runtime_version = r.opt_text("cuda_runtime_version");
  run.torch_version = r.opt_text("torch_version");
  run.label = r.opt_text("label");
  GPUSCOPE_RETURN_IF_ERROR(top.status());
  GPUSCOPE_RETURN_IF_ERROR(r.status());

  GPUSCOPE_RETURN_IF_ERROR(read_list(top, "gpus", where, gpu_from_json, run.gpus));
  GPUSCOPE_RETURN_IF_ERROR(
      read_list(top, "configurations", where, configuration_from_json, run.configurations));
  GPUSCOPE_RETURN_IF_ERROR(
      read_list(top, "measurements", where, measurement_from_json, data.measurements));
  GPUSCOPE_RETURN_IF_ERROR(read_list(top, "telemetry", where, series_from_json, data.telemetry));
  GPUSCOPE_RETURN_IF_ERROR(read_list(top, "findings", where, finding_from_json, data.findings));
  return data;
}

}  // namespace

json runs_to_json(const std::vector<RunData>& runs) {
  json out_runs = json::array();
  for (const RunData& data : runs) {
    json gpus = json::array();
    for (const GpuRecord& g : data.run.gpus) gpus.push_back(gpu_to_json(g));
    json configs = json::array();
    for (const Configuration& c : data.run.configurations) {
      configs.push_back({{"name", c.name}, {"params", c.params}});
    }
    json measurements = json::array();
    for (const Measurement& m : data.measurements) measurements.push_back(measurement_to_json(m));
    json telemetry = json::array();
    for (const TelemetrySeries& s : data.telemetry) {
      telemetry.push_back({{"gpu", s.gpu},
                           {"metric", s.metric},
                           {"unit", s.unit},
                           {"t_s", s.t_s},
                           {"values", s.values}});
    }
    json findings = json::array();
    for (const Finding& f : data.findings) {
      json finding = detail::finding_details(f);
      finding["severity"] = severity_name(f.severity);
      finding["code"] = f.id;
      finding["text"] = f.title;
      put(finding, "gpu", f.gpu);
      findings.push_back(std::move(finding));
    }
    out_runs.push_back({{"run", run_to_json(data.run)},
                        {"gpus", gpus},
                        {"configurations", configs},
                        {"measurements", measurements},
                        {"telemetry", telemetry},
                        {"findings", findings}});
  }
  return {
      {"kind", "gpuscope.records"}, {"schema_version", kRecordsSchemaVersion}, {"runs", out_runs}};
}

Result<std::vector<RunData>> runs_from_json(const json& document) {
  JsonFields top(document, "records");
  std::string kind = top.text("kind");
  std::optional<int> version = top.opt_int("schema_version");
  GPUSCOPE_RETURN_IF_ERROR(top.status());
  if (kind != "gpuscope.records") {
    return Status(Code::data_error,
                  fmt::format("expected a gpuscope.records document, found kind '{}'", kind));
  }
  if (!version || *version > kRecordsSchemaVersion) {
    return Status(
        Code::data_error,
        fmt::format("records schema_version {} is not one this gpuscope reads (up to {})",
                    version ? std::to_string(*version) : "(missing)", kRecordsSchemaVersion));
  }
  const json& runs = top.member("runs");
  if (!runs.is_array()) return Status(Code::data_error, "records.runs: expected an array");
  std::vector<RunData> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    GPUSCOPE_ASSIGN_OR_RETURN(RunData data, run_from_json(runs[i], fmt::format("runs[{}]", i)));
    out.push_back(std::move(data));
  }
  return out;
}

}  // namespace gpuscope::store
