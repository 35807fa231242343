// burn's JSON document: its writer and its one reader.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "common/enum_names.h"
#include "common/json_fields.h"
#include "gpuscope/burn_report.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/json.h"
#include "gpuscope/process.h"

namespace gpuscope {
namespace {

using json = nlohmann::json;

void put_text(json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

constexpr detail::EnumName<burn::Outcome> kOutcomeNames[] = {
    {burn::Outcome::passed, "passed"},
    {burn::Outcome::verification_failed, "verification_failed"},
    {burn::Outcome::failed, "failed"},
    {burn::Outcome::interrupted, "interrupted"}};
static_assert(detail::names_every_value(kOutcomeNames, burn::Outcome::interrupted));
constexpr detail::EnumName<burn::RowStatus> kRowStatusNames[] = {
    {burn::RowStatus::measured, "measured"},
    {burn::RowStatus::skipped, "skipped"},
    {burn::RowStatus::failed, "failed"},
    {burn::RowStatus::not_run, "not_run"}};
static_assert(detail::names_every_value(kRowStatusNames, burn::RowStatus::not_run));

}  // namespace

const char* burn::outcome_name(Outcome outcome) {
  return detail::name_in(kOutcomeNames, outcome);
}

const char* burn::row_status_name(RowStatus status) {
  return detail::name_in(kRowStatusNames, status);
}

json burn_options_to_json(const burn::Options& o) {
  json precisions = json::array();
  for (Precision p : o.precisions) precisions.push_back(precision_name(p));
  json j = {{"precisions", o.precisions.empty() ? json("all") : precisions},
            {"duration_seconds", o.duration_seconds},
            {"memory", o.memory},
            {"host_link", o.host_link},
            {"inject_fault", o.inject_fault},
            {"sample_interval_seconds", o.sample_interval_seconds}};
  put(j, "size", o.size);
  put(j, "memory_fraction", o.memory_fraction);
  put_text(j, "gpu", o.gpu);
  return j;
}

namespace {

json gemm_json(const burn::PrecisionRow& r) {
  json j = {{"precision", precision_name(r.precision)},
            {"status", burn::row_status_name(r.status)}};
  put_text(j, "note", r.note);
  if (!r.flop_per_second_median) return j;  // skipped, not run, or failed before a window
  j["partial"] = r.partial;
  j["windows"] = r.windows;
  j["verified"] = r.verified;
  j["span_seconds"] = r.span_seconds;
  put(j, "n", r.n);
  json rate = {{"median", *r.flop_per_second_median}};
  put(rate, "min", r.flop_per_second_min);
  put(rate, "max", r.flop_per_second_max);
  j["flop_per_s"] = rate;
  put(j, "fraction_of_peak", r.fraction_of_peak);
  const burn::ErrorCounts& e = r.errors;
  j["errors"] = {{"total", e.total()},
                 {"gemms_checked", e.gemms_checked},
                 {"mismatches", e.mismatches},
                 {"nan_count", e.nan_count},
                 {"inf_count", e.inf_count},
                 {"reference_tiles_checked", e.reference_tiles_checked},
                 {"reference_tiles_failed", e.reference_tiles_failed}};
  put(j, "temperature_max_c", r.temperature_max_c);
  put(j, "temperature_start_c", r.temperature_start_c);
  put(j, "power_average_w", r.power_average_w);
  put(j, "energy_j", r.energy_j);
  put_text(j, "energy_source", r.energy_source);
  put(j, "flop_per_joule", r.flop_per_joule);
  put(j, "sm_clock_average_hz", r.sm_clock_average_hz);
  put(j, "sm_activity", r.sm_activity);
  put(j, "tensor_activity", r.tensor_activity);
  if (!r.throttle.empty()) {
    json seconds = json::object();
    json estimated = json::array();
    for (const burn::ThrottleTime& t : r.throttle) {
      seconds[t.reason] = t.seconds;
      if (t.estimated) estimated.push_back(t.reason);
    }
    j["throttle_seconds"] = seconds;
    if (!estimated.empty()) j["throttle_estimated_from_samples"] = estimated;
  }
  put_text(j, "algorithm", r.algorithm);
  return j;
}

json target_json(const burn::TargetResult& t) {
  const burn::Target& target = t.target;
  json j = {{"label", target.label()},          {"gpu_index", target.gpu_index},
            {"gpu_name", target.gpu_name},      {"gpu_uuid", target.gpu_uuid},
            {"visible_devices", target.uuid()}, {"outcome", burn::outcome_name(t.outcome)}};
  put(j, "pci_bus_id", target.pci_bus_id);
  if (target.mig) {
    const MigPlacement& m = *target.mig;
    json mig = {{"gpu_instance_id", m.gpu_instance_id},
                {"compute_instance_id", m.compute_instance_id},
                {"profile", m.profile},
                {"name", target.name},
                {"uuid", m.uuid}};
    put(mig, "sm_count", target.sm_count);
    put(mig, "memory_total_bytes", target.memory_total_bytes);
    j["mig"] = mig;
  }
  if (target.peak) {
    j["peak"] = {{"model", target.peak->model}, {"estimated", target.peak->estimated}};
    put_text(j["peak"], "note", target.peak_note);
  }
  put_text(j, "failure", t.failure);

  json worker = json::object();
  put(worker, "exit_code", t.worker_exit_code);
  if (t.worker_signal) {
    worker["signal"] = *t.worker_signal;
    worker["signal_name"] = signal_name(*t.worker_signal);
  }
  if (!t.stderr_tail.empty()) worker["stderr_tail"] = t.stderr_tail;
  j["worker"] = worker;

  if (t.device) {
    j["device"] = {{"name", t.device->name},
                   {"uuid", t.device->uuid},
                   {"pci_bus_id", t.device->pci_bus_id},
                   {"compute_capability", t.device->compute_capability},
                   {"sm_count", t.device->sm_count},
                   {"total_memory_bytes", t.device->total_memory_bytes}};
  }
  j["gemm"] = json::array();
  for (const burn::PrecisionRow& r : t.gemm) j["gemm"].push_back(gemm_json(r));

  j["memory"] = json::array();
  for (const burn::MemoryRow& m : t.memory) {
    json row = {{"kernel", m.kernel},
                {"buffer_bytes", m.buffer_bytes},
                {"bytes_read", m.bytes_read},
                {"bytes_written", m.bytes_written},
                {"bytes_counted", m.bytes_counted},
                {"seconds", m.seconds},
                {"bytes_per_s", m.bytes_per_second}};
    put(row, "fraction_of_peak", m.fraction_of_peak);
    j["memory"].push_back(row);
  }
  j["host_link"] = json::array();
  for (const burn::HostLinkRow& h : t.host_link) {
    j["host_link"].push_back({{"memory", h.memory},
                              {"direction", h.direction},
                              {"size_bytes", h.size_bytes},
                              {"bytes_moved", h.bytes_moved},
                              {"seconds", h.seconds},
                              {"bytes_per_s", h.bytes_per_second},
                              {"timing", h.timing}});
  }
  j["overlap"] = json::array();
  for (const burn::OverlapRow& o : t.overlap) {
    j["overlap"].push_back({{"memory", o.memory},
                            {"copy_bytes", o.copy_bytes},
                            {"copy_seconds", o.copy_seconds},
                            {"compute_seconds", o.compute_seconds},
                            {"both_seconds", o.both_seconds},
                            {"efficiency", o.efficiency}});
  }
  j["skipped"] = json::array();
  for (const burn::SkippedTest& s : t.skipped) {
    j["skipped"].push_back({{"what", s.what}, {"code", s.code}, {"reason", s.reason}});
  }
  j["errors"] = json::array();
  for (const burn::WorkerError& e : t.errors) {
    json error = {{"code", e.code}, {"message", e.message}};
    if (e.precision) error["precision"] = precision_name(*e.precision);
    j["errors"].push_back(error);
  }
  j["warnings"] = t.warnings;
  return j;
}

}  // namespace

json burn_to_json(const burn::Report& report) {
  const int code = burn::exit_code(report);
  json host = {{"hostname", report.hostname}, {"gpuscope_version", report.gpuscope_version}};
  put(host, "driver_version", report.driver_version);
  put(host, "cuda_driver_version", report.cuda_driver_version);
  json j = {{"schema_version", kBurnSchemaVersion},
            {"kind", "gpuscope.burn"},
            {"ok", code == kExitOk},
            {"interrupted", report.interrupted},
            {"exit_code", code},
            {"wall_seconds", report.wall_seconds},
            {"worker_program", report.worker},
            {"host", host},
            {"options", burn_options_to_json(report.options)},
            {"targets", json::array()}};
  for (const burn::TargetResult& t : report.targets) j["targets"].push_back(target_json(t));
  if (const auto& ic = report.interconnect) {
    json rows = json::array(), copies = json::array();
    for (const auto& r : ic->all_reduce) {
      rows.push_back({{"bytes", r.bytes},
                      {"gpus", r.gpus},
                      {"iterations", r.iterations},
                      {"seconds", r.seconds},
                      {"algorithm_bytes_per_second", r.algorithm_bandwidth},
                      {"bus_bytes_per_second", r.bus_bandwidth}});
    }
    for (const auto& c : ic->peer_copies) {
      copies.push_back({{"source", ic->gpu_name(c.source)},
                        {"destination", ic->gpu_name(c.destination)},
                        {"peer_access", c.peer_access},
                        {"bytes", c.bytes},
                        {"seconds", c.seconds},
                        {"bytes_per_second", c.bandwidth}});
    }
    json links = json::array();
    for (const auto& l : ic->links) {
      json link = {{"first", ic->gpus.at(l.first)},
                   {"second", ic->gpus.at(l.second)},
                   {"label", l.link.label()},
                   {"nvlinks", l.link.nvlinks},
                   {"through_switch", l.link.through_switch}};
      put(link, "pcie_path", l.link.pcie_path);
      links.push_back(link);
    }
    j["interconnect"] = {{"gpus", ic->gpus},   {"links", links},        {"ok", ic->ok},
                         {"all_reduce", rows}, {"peer_copies", copies}, {"problems", ic->problems}};
  }
  return j;
}

json burn_error_json(const Status& status) {
  return error_document("gpuscope.burn", kBurnSchemaVersion, status);
}

// ---------------------------------------------------------------------------------------------
// The reader: every field burn_to_json writes comes back; fields that are derived (ok,
// exit_code, label, visible_devices, errors.total) are computed again. What names a row
// (a precision, a kernel, a direction) is required; a reading may be absent; a field of the
// wrong type is an error naming its path.

namespace {

using gpuscope::detail::JsonFields;

// An optional object member: absent (or null) reads as an empty object.
const json& object_or_empty(JsonFields& f, const char* key) {
  static const json kEmpty = json::object();
  const json& v = f.member(key);
  return v.is_null() ? kEmpty : v;
}

// Byte counts as numbers: hand-written documents (and older ones) have them as 1.0e9.
std::uint64_t byte_count(JsonFields& f, const char* key) {
  const std::optional<double> v = f.opt_number(key);
  if (v && *v < 0) f.fail(key, "expected a non-negative number");
  return v && *v > 0 ? static_cast<std::uint64_t>(*v) : 0;
}

Status read_texts(JsonFields& f, const char* key, std::vector<std::string>& out) {
  out = f.texts(key);
  return f.status();
}

// Calls read(item) on each object of the list `key` (absent: none), item named "where.key[i]";
// stops at the first problem.
template <typename Read>
Status read_list(JsonFields& f, const char* key, Read read) {
  const json& list = f.list(key);
  GPUSCOPE_RETURN_IF_ERROR(f.status());
  for (std::size_t i = 0; i < list.size(); ++i) {
    JsonFields item(list[i], fmt::format("{}.{}[{}]", f.where(), key, i));
    GPUSCOPE_RETURN_IF_ERROR(item.status());
    GPUSCOPE_RETURN_IF_ERROR(read(item));
    GPUSCOPE_RETURN_IF_ERROR(item.status());
  }
  return Status{};
}

std::optional<Precision> read_precision(JsonFields& f, const char* key) {
  const std::optional<std::string> name = f.opt_text(key);
  if (!name) return std::nullopt;
  const std::optional<Precision> p = parse_precision(*name);
  if (!p) f.fail(key, fmt::format("'{}' is not a precision", *name));
  return p;
}

std::optional<burn::Outcome> outcome_named(std::string_view name) {
  return detail::value_named(kOutcomeNames, name);
}

std::optional<burn::RowStatus> row_status_named(std::string_view name) {
  return detail::value_named(kRowStatusNames, name);
}

Status read_options(JsonFields& o, burn::Options& options) {
  const json& precisions = o.member("precisions");
  if (precisions.is_array()) {
    std::vector<std::string> names;
    GPUSCOPE_RETURN_IF_ERROR(read_texts(o, "precisions", names));
    for (const std::string& name : names) {
      const std::optional<Precision> p = parse_precision(name);
      if (!p) o.fail("precisions", fmt::format("'{}' is not a precision", name));
      if (p) options.precisions.push_back(*p);
    }
  } else if (!precisions.is_null() && precisions != "all") {
    o.fail("precisions", "expected \"all\" or a list of precisions");
  }
  options.duration_seconds = o.opt_number("duration_seconds").value_or(options.duration_seconds);
  options.size = o.opt_int("size");
  options.memory_fraction = o.opt_number("memory_fraction");
  options.memory = o.opt_bool("memory").value_or(options.memory);
  options.host_link = o.opt_bool("host_link").value_or(options.host_link);
  options.inject_fault = o.opt_bool("inject_fault").value_or(false);
  options.sample_interval_seconds =
      o.opt_number("sample_interval_seconds").value_or(options.sample_interval_seconds);
  options.gpu = o.opt_text("gpu").value_or("");
  return o.status();
}

Status read_gemm_row(JsonFields& r, burn::PrecisionRow& row) {
  if (!r.has("precision")) r.fail("precision", "missing");
  row.precision = read_precision(r, "precision").value_or(Precision::fp32);
  const std::string status = r.opt_text("status").value_or("measured");
  if (auto s = row_status_named(status)) {
    row.status = *s;
  } else if (r.status().ok()) {
    r.fail("status", fmt::format("'{}' is not a row status", status));
  }
  row.note = r.opt_text("note").value_or("");
  row.partial = r.opt_bool("partial").value_or(false);
  row.n = r.opt_int("n");
  row.windows = r.opt_int("windows").value_or(0);
  row.verified = r.opt_bool("verified").value_or(false);
  row.span_seconds = r.opt_number("span_seconds").value_or(0);
  if (r.has("flop_per_s")) {
    JsonFields rate(r.member("flop_per_s"), r.where() + ".flop_per_s");
    row.flop_per_second_median = rate.opt_number("median");
    row.flop_per_second_min = rate.opt_number("min");
    row.flop_per_second_max = rate.opt_number("max");
    GPUSCOPE_RETURN_IF_ERROR(rate.status());
  }
  row.fraction_of_peak = r.opt_number("fraction_of_peak");
  if (r.has("errors")) {
    JsonFields e(r.member("errors"), r.where() + ".errors");
    burn::ErrorCounts& counts = row.errors;
    counts.gemms_checked = byte_count(e, "gemms_checked");
    counts.mismatches = byte_count(e, "mismatches");
    counts.nan_count = byte_count(e, "nan_count");
    counts.inf_count = byte_count(e, "inf_count");
    counts.reference_tiles_checked = e.opt_int("reference_tiles_checked").value_or(0);
    counts.reference_tiles_failed = e.opt_int("reference_tiles_failed").value_or(0);
    GPUSCOPE_RETURN_IF_ERROR(e.status());
  }
  row.temperature_max_c = r.opt_number("temperature_max_c");
  row.temperature_start_c = r.opt_number("temperature_start_c");
  row.power_average_w = r.opt_number("power_average_w");
  row.energy_j = r.opt_number("energy_j");
  row.energy_source = r.opt_text("energy_source").value_or("");
  row.flop_per_joule = r.opt_number("flop_per_joule");
  row.sm_clock_average_hz = r.opt_number("sm_clock_average_hz");
  row.sm_activity = r.opt_number("sm_activity");
  row.tensor_activity = r.opt_number("tensor_activity");
  row.algorithm = r.opt_text("algorithm").value_or("");
  std::vector<std::string> estimated;
  GPUSCOPE_RETURN_IF_ERROR(read_texts(r, "throttle_estimated_from_samples", estimated));
  if (r.has("throttle_seconds")) {
    JsonFields throttle(r.member("throttle_seconds"), r.where() + ".throttle_seconds");
    for (const auto& [reason, seconds] : r.member("throttle_seconds").items()) {
      const bool guessed = std::find(estimated.begin(), estimated.end(), reason) != estimated.end();
      if (auto s = throttle.opt_number(reason.c_str()))
        row.throttle.push_back({reason, *s, guessed});
    }
    GPUSCOPE_RETURN_IF_ERROR(throttle.status());
  }
  return r.status();
}

Status read_target(JsonFields& t, std::size_t position, burn::TargetResult& result) {
  burn::Target& target = result.target;
  target.gpu_index =
      t.opt_unsigned<unsigned>("gpu_index").value_or(static_cast<unsigned>(position));
  target.gpu_name = t.opt_text("gpu_name").value_or("");
  target.gpu_uuid = t.opt_text("gpu_uuid").value_or("");
  target.pci_bus_id = t.opt_text("pci_bus_id");
  target.name = target.gpu_name;
  if (t.has("mig")) {
    JsonFields m(t.member("mig"), t.where() + ".mig");
    MigPlacement mig;
    mig.gpu_instance_id = m.opt_unsigned<unsigned>("gpu_instance_id").value_or(0);
    mig.compute_instance_id = m.opt_unsigned<unsigned>("compute_instance_id").value_or(0);
    mig.uuid = m.opt_text("uuid").value_or("");
    mig.profile = m.opt_text("profile").value_or("");
    target.name = m.opt_text("name").value_or(target.gpu_name);
    target.sm_count = m.opt_unsigned<unsigned>("sm_count");
    target.memory_total_bytes = m.opt_unsigned<std::uint64_t>("memory_total_bytes");
    target.mig = std::move(mig);
    GPUSCOPE_RETURN_IF_ERROR(m.status());
  }
  if (t.has("peak")) {
    JsonFields p(t.member("peak"), t.where() + ".peak");
    PeakRates peak;
    peak.model = p.opt_text("model").value_or("");
    peak.estimated = p.opt_bool("estimated").value_or(false);
    target.peak_note = p.opt_text("note").value_or("");
    target.peak = std::move(peak);
    GPUSCOPE_RETURN_IF_ERROR(p.status());
  }
  const std::string outcome = t.text("outcome");
  if (auto o = outcome_named(outcome)) {
    result.outcome = *o;
  } else if (t.status().ok()) {
    t.fail("outcome", fmt::format("'{}' is not an outcome", outcome));
  }
  result.failure = t.opt_text("failure").value_or("");

  JsonFields worker(object_or_empty(t, "worker"), t.where() + ".worker");
  result.worker_exit_code = worker.opt_int("exit_code");
  result.worker_signal = worker.opt_int("signal");
  GPUSCOPE_RETURN_IF_ERROR(read_texts(worker, "stderr_tail", result.stderr_tail));
  if (t.has("device")) {
    JsonFields d(t.member("device"), t.where() + ".device");
    burn::WorkerDevice device;
    device.name = d.opt_text("name").value_or("");
    device.uuid = d.opt_text("uuid").value_or("");
    device.pci_bus_id = d.opt_text("pci_bus_id").value_or("");
    device.compute_capability = d.opt_text("compute_capability").value_or("");
    device.sm_count = d.opt_int("sm_count").value_or(0);
    device.total_memory_bytes = byte_count(d, "total_memory_bytes");
    result.device = std::move(device);
    GPUSCOPE_RETURN_IF_ERROR(d.status());
  }
  GPUSCOPE_RETURN_IF_ERROR(read_list(
      t, "gemm", [&](JsonFields& r) { return read_gemm_row(r, result.gemm.emplace_back()); }));
  GPUSCOPE_RETURN_IF_ERROR(read_list(t, "memory", [&](JsonFields& m) {
    burn::MemoryRow& row = result.memory.emplace_back();
    row.kernel = m.text("kernel");
    row.buffer_bytes = byte_count(m, "buffer_bytes");
    row.bytes_read = byte_count(m, "bytes_read");
    row.bytes_written = byte_count(m, "bytes_written");
    row.bytes_counted = byte_count(m, "bytes_counted");
    row.seconds = m.opt_number("seconds").value_or(0);
    row.bytes_per_second = m.opt_number("bytes_per_s").value_or(0);
    row.fraction_of_peak = m.opt_number("fraction_of_peak");
    return m.status();
  }));
  GPUSCOPE_RETURN_IF_ERROR(read_list(t, "host_link", [&](JsonFields& h) {
    burn::HostLinkRow& row = result.host_link.emplace_back();
    row.memory = h.text("memory");
    row.direction = h.text("direction");
    row.size_bytes = byte_count(h, "size_bytes");
    row.bytes_moved = byte_count(h, "bytes_moved");
    row.seconds = h.opt_number("seconds").value_or(0);
    row.bytes_per_second = h.opt_number("bytes_per_s").value_or(0);
    row.timing = h.opt_text("timing").value_or("");
    return h.status();
  }));
  GPUSCOPE_RETURN_IF_ERROR(read_list(t, "overlap", [&](JsonFields& o) {
    burn::OverlapRow& row = result.overlap.emplace_back();
    row.memory = o.text("memory");
    row.copy_bytes = byte_count(o, "copy_bytes");
    row.copy_seconds = o.opt_number("copy_seconds").value_or(0);
    row.compute_seconds = o.opt_number("compute_seconds").value_or(0);
    row.both_seconds = o.opt_number("both_seconds").value_or(0);
    row.efficiency = o.opt_number("efficiency").value_or(0);
    return o.status();
  }));
  GPUSCOPE_RETURN_IF_ERROR(read_list(t, "skipped", [&](JsonFields& s) {
    result.skipped.push_back(
        {s.text("what"), s.opt_text("code").value_or(""), s.opt_text("reason").value_or("")});
    return s.status();
  }));
  GPUSCOPE_RETURN_IF_ERROR(read_list(t, "errors", [&](JsonFields& e) {
    result.errors.push_back({e.opt_text("code").value_or(""), e.opt_text("message").value_or(""),
                             read_precision(e, "precision")});
    return e.status();
  }));
  GPUSCOPE_RETURN_IF_ERROR(read_texts(t, "warnings", result.warnings));
  return t.status();
}

// A GPU of the interconnect by the name the writer gave it (InterconnectReport::gpu_name).
int interconnect_ordinal(const burn::InterconnectReport& ic, JsonFields& f, const char* key) {
  const std::string name = f.text(key);
  for (std::size_t i = 0; i < ic.gpus.size(); ++i) {
    if (ic.gpus[i] == name) return static_cast<int>(i);
  }
  int ordinal = 0;
  if (std::sscanf(name.c_str(), "CUDA device %d", &ordinal) == 1) return ordinal;
  f.fail(key, fmt::format("'{}' is not one of the interconnect's gpus", name));
  return 0;
}

Status read_interconnect(JsonFields& f, burn::InterconnectReport& ic) {
  GPUSCOPE_RETURN_IF_ERROR(read_texts(f, "gpus", ic.gpus));
  GPUSCOPE_RETURN_IF_ERROR(read_texts(f, "problems", ic.problems));
  ic.ok = f.opt_bool("ok").value_or(false);
  GPUSCOPE_RETURN_IF_ERROR(read_list(f, "links", [&](JsonFields& l) {
    burn::InterconnectReport::Link link;
    link.first = static_cast<std::size_t>(interconnect_ordinal(ic, l, "first"));
    link.second = static_cast<std::size_t>(interconnect_ordinal(ic, l, "second"));
    link.link.nvlinks = l.opt_unsigned<unsigned>("nvlinks").value_or(0);
    link.link.through_switch = l.opt_bool("through_switch").value_or(false);
    link.link.pcie_path = l.opt_text("pcie_path");
    if (std::max(link.first, link.second) >= ic.gpus.size()) {
      l.fail("", "a link of a GPU outside the interconnect's gpus");
    }
    ic.links.push_back(std::move(link));
    return l.status();
  }));
  GPUSCOPE_RETURN_IF_ERROR(read_list(f, "all_reduce", [&](JsonFields& r) {
    capability::AllReduceResult& row = ic.all_reduce.emplace_back();
    row.bytes = byte_count(r, "bytes");
    row.gpus = r.opt_int("gpus").value_or(0);
    row.iterations = r.opt_int("iterations").value_or(0);
    row.seconds = r.opt_number("seconds").value_or(0);
    row.algorithm_bandwidth = r.opt_number("algorithm_bytes_per_second").value_or(0);
    row.bus_bandwidth = r.opt_number("bus_bytes_per_second").value_or(0);
    return r.status();
  }));
  GPUSCOPE_RETURN_IF_ERROR(read_list(f, "peer_copies", [&](JsonFields& c) {
    capability::PeerCopyResult& row = ic.peer_copies.emplace_back();
    row.source = interconnect_ordinal(ic, c, "source");
    row.destination = interconnect_ordinal(ic, c, "destination");
    row.peer_access = c.opt_bool("peer_access").value_or(false);
    row.bytes = byte_count(c, "bytes");
    row.seconds = c.opt_number("seconds").value_or(0);
    row.bandwidth = c.opt_number("bytes_per_second").value_or(0);
    return c.status();
  }));
  return f.status();
}

}  // namespace

Result<burn::Report> burn_from_json(const json& document) {
  JsonFields top(document, "burn");
  if (!top.status().ok() || top.opt_text("kind").value_or("gpuscope.burn") != "gpuscope.burn") {
    return Status(Code::data_error, "not the output of `gpuscope burn --json`");
  }
  const std::optional<int> version = top.opt_int("schema_version");
  if (!version || *version > kBurnSchemaVersion) {
    return Status(
        Code::data_error,
        fmt::format("burn schema_version {} is not one this gpuscope reads (up to {})",
                    version ? std::to_string(*version) : "(missing)", kBurnSchemaVersion));
  }
  burn::Report report;
  JsonFields host(object_or_empty(top, "host"), "burn.host");
  report.hostname = host.opt_text("hostname").value_or("");
  report.gpuscope_version = host.opt_text("gpuscope_version").value_or("");
  report.driver_version = host.opt_text("driver_version");
  if (auto cuda = host.opt_number("cuda_driver_version")) {
    report.cuda_driver_version = static_cast<int>(*cuda);
  }
  GPUSCOPE_RETURN_IF_ERROR(host.status());
  JsonFields options(object_or_empty(top, "options"), "burn.options");
  GPUSCOPE_RETURN_IF_ERROR(read_options(options, report.options));
  report.worker = top.opt_text("worker_program").value_or("");
  report.interrupted = top.opt_bool("interrupted").value_or(false);
  report.wall_seconds = top.opt_number("wall_seconds").value_or(0);
  std::size_t position = 0;
  GPUSCOPE_RETURN_IF_ERROR(read_list(top, "targets", [&](JsonFields& t) {
    return read_target(t, position++, report.targets.emplace_back());
  }));
  if (top.has("interconnect")) {
    JsonFields ic(top.member("interconnect"), "burn.interconnect");
    GPUSCOPE_RETURN_IF_ERROR(read_interconnect(ic, report.interconnect.emplace()));
  }
  GPUSCOPE_RETURN_IF_ERROR(top.status());
  return report;
}

}  // namespace gpuscope
