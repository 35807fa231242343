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

const char* outcome_name(burn::Outcome outcome) {
  switch (outcome) {
    case burn::Outcome::passed:
      return "passed";
    case burn::Outcome::verification_failed:
      return "verification_failed";
    case burn::Outcome::failed:
      return "failed";
    case burn::Outcome::interrupted:
      return "interrupted";
  }
  return "unknown";
}

const char* status_name(burn::RowStatus status) {
  switch (status) {
    case burn::RowStatus::measured:
      return "measured";
    case burn::RowStatus::skipped:
      return "skipped";
    case burn::RowStatus::failed:
      return "failed";
    case burn::RowStatus::not_run:
      return "not_run";
  }
  return "unknown";
}

json options_json(const burn::Options& o) {
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

json gemm_json(const burn::PrecisionRow& r) {
  json j = {{"precision", precision_name(r.precision)}, {"status", status_name(r.status)}};
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
            {"visible_devices", target.uuid()}, {"outcome", outcome_name(t.outcome)}};
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
            {"options", options_json(report.options)},
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

}  // namespace gpuscope
