// Reading runs back from a store, of any schema version up to the current one.
#include <fmt/format.h>

#include <map>

#include "gpuscope/store.h"
#include "store/record_json.h"
#include "store/sqlite_db.h"

namespace gpuscope::store {
namespace {

using detail::Statement;

// Version 1 stores (opened read-only, so not migrated) lack runs.label and findings.code.
std::string_view label_column(int schema) {
  return schema >= 2 ? "label" : "NULL";
}
std::string_view code_column(int schema) {
  return schema >= 2 ? "code" : "''";
}

// Version 3 keeps a finding's evidence, fix and subjects as JSON; older stores have none.
std::string_view details_column(int schema) {
  return schema >= 3 ? "details" : "NULL";
}

template <typename Fn>
Status for_each_row(Statement& stmt, Fn&& fn) {
  for (;;) {
    GPUSCOPE_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) return Status{};
    GPUSCOPE_RETURN_IF_ERROR(fn());
  }
}

std::optional<int> optional_int(const Statement& stmt, int column) {
  auto v = stmt.optional_int64(column);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace

Result<std::vector<RunSummary>> Store::list_runs() const {
  GPUSCOPE_ASSIGN_OR_RETURN(
      Statement runs,
      db_->prepare(fmt::format(
          "SELECT id, kind, started_unix_s, ended_unix_s, host, {}, (SELECT count(*) FROM "
          "measurements m WHERE m.run_id = runs.id) FROM runs ORDER BY started_unix_s DESC, id "
          "DESC",
          label_column(schema_version_))));
  GPUSCOPE_ASSIGN_OR_RETURN(Statement gpus,
                            db_->prepare("SELECT name FROM gpus WHERE run_id = ? ORDER BY gpu"));
  std::vector<RunSummary> out;
  if (Status listed = for_each_row(runs,
                                   [&]() -> Status {
                                     RunSummary s;
                                     s.id = runs.int64(0);
                                     s.kind = runs.text(1);
                                     s.started_unix_s = runs.real(2);
                                     s.ended_unix_s = runs.optional_real(3);
                                     s.host = runs.text(4);
                                     s.label = runs.optional_text(5);
                                     s.measurement_count = runs.int64(6);
                                     gpus.bind(1, s.id);
                                     GPUSCOPE_RETURN_IF_ERROR(for_each_row(gpus, [&]() -> Status {
                                       s.gpu_names.push_back(gpus.text(0));
                                       return Status{};
                                     }));
                                     gpus.reset();
                                     out.push_back(std::move(s));
                                     return Status{};
                                   });
      !listed.ok())
    return listed;
  return out;
}

Result<RunData> Store::load_run(RunId id) const {
  RunData data;
  data.source = path_;
  RunRecord& run = data.run;
  {
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement stmt,
        db_->prepare(fmt::format(
            "SELECT id, kind, started_unix_s, ended_unix_s, host, command_line, gpuscope_version, "
            "driver_version, cuda_driver_version, cuda_runtime_version, torch_version, {} FROM "
            "runs WHERE id = ?",
            label_column(schema_version_))));
    stmt.bind(1, id);
    GPUSCOPE_ASSIGN_OR_RETURN(bool found, stmt.step());
    if (!found) return Status(Code::not_found, fmt::format("{} has no run {}", path_, id));
    run.id = stmt.int64(0);
    run.kind = stmt.text(1);
    run.started_unix_s = stmt.real(2);
    run.ended_unix_s = stmt.optional_real(3);
    run.host = stmt.text(4);
    run.command_line = stmt.text(5);
    run.gpuscope_version = stmt.text(6);
    run.driver_version = stmt.optional_text(7);
    run.cuda_driver_version = stmt.optional_text(8);
    run.cuda_runtime_version = stmt.optional_text(9);
    run.torch_version = stmt.optional_text(10);
    run.label = stmt.optional_text(11);
  }
  {
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement stmt,
        db_->prepare("SELECT gpu, name, uuid, pci_bus_id, compute_capability, sm_count, "
                     "memory_total_bytes, power_limit_w, power_default_limit_w, power_min_limit_w, "
                     "power_max_limit_w, sm_clock_max_hz, memory_clock_max_hz, "
                     "temperature_slowdown_c, pcie_generation_max, pcie_width_max, peak_json, "
                     "details_json FROM gpus WHERE run_id = ? ORDER BY gpu"));
    stmt.bind(1, id);
    if (Status gpus_read = for_each_row(
            stmt,
            [&]() -> Status {
              GpuRecord g;
              g.gpu = static_cast<int>(stmt.int64(0));
              g.name = stmt.text(1);
              g.uuid = stmt.text(2);
              g.pci_bus_id = stmt.optional_text(3);
              g.compute_capability = stmt.optional_text(4);
              g.sm_count = optional_int(stmt, 5);
              if (auto memory = stmt.optional_int64(6)) {
                g.memory_total_bytes = static_cast<std::uint64_t>(*memory);
              }
              g.power_limit_w = stmt.optional_real(7);
              g.power_default_limit_w = stmt.optional_real(8);
              g.power_min_limit_w = stmt.optional_real(9);
              g.power_max_limit_w = stmt.optional_real(10);
              g.sm_clock_max_hz = stmt.optional_real(11);
              g.memory_clock_max_hz = stmt.optional_real(12);
              g.temperature_slowdown_c = stmt.optional_real(13);
              g.pcie_generation_max = optional_int(stmt, 14);
              g.pcie_width_max = optional_int(stmt, 15);
              if (auto peak = stmt.optional_text(16)) {
                GPUSCOPE_ASSIGN_OR_RETURN(nlohmann::json json,
                                          detail::parse_json_column(*peak, "peak_json"));
                GPUSCOPE_ASSIGN_OR_RETURN(g.peak, detail::peak_from_json(json));
              }
              GPUSCOPE_ASSIGN_OR_RETURN(g.details,
                                        detail::parse_json_column(stmt.text(17), "details_json"));
              run.gpus.push_back(std::move(g));
              return Status{};
            });
        !gpus_read.ok())
      return gpus_read;
  }
  std::map<std::int64_t, std::string> config_names;
  {
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement stmt,
        db_->prepare(
            "SELECT id, name, params_json FROM configurations WHERE run_id = ? ORDER BY id"));
    stmt.bind(1, id);
    if (Status configs_read =
            for_each_row(stmt,
                         [&]() -> Status {
                           Configuration c;
                           c.name = stmt.text(1);
                           GPUSCOPE_ASSIGN_OR_RETURN(
                               c.params, detail::parse_json_column(stmt.text(2), "params_json"));
                           config_names[stmt.int64(0)] = c.name;
                           run.configurations.push_back(std::move(c));
                           return Status{};
                         });
        !configs_read.ok())
      return configs_read;
  }
  {
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement stmt,
        db_->prepare("SELECT gpu, configuration_id, name, value, unit, tags_json FROM measurements "
                     "WHERE run_id = ? ORDER BY id"));
    stmt.bind(1, id);
    if (Status measurements_read =
            for_each_row(stmt,
                         [&]() -> Status {
                           Measurement m;
                           m.gpu = optional_int(stmt, 0);
                           if (auto config = stmt.optional_int64(1))
                             m.configuration = config_names[*config];
                           m.name = stmt.text(2);
                           m.value = stmt.optional_real(3);
                           m.unit = stmt.text(4);
                           GPUSCOPE_ASSIGN_OR_RETURN(
                               m.tags, detail::parse_json_column(stmt.text(5), "tags_json"));
                           data.measurements.push_back(std::move(m));
                           return Status{};
                         });
        !measurements_read.ok())
      return measurements_read;
  }
  {
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement series,
        db_->prepare("SELECT id, gpu, metric, unit FROM telemetry_series WHERE run_id = ? ORDER BY "
                     "gpu, metric"));
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement points,
        db_->prepare("SELECT t_s, value FROM telemetry WHERE series_id = ? ORDER BY t_s"));
    series.bind(1, id);
    if (Status telemetry_read =
            for_each_row(series,
                         [&]() -> Status {
                           TelemetrySeries s;
                           s.gpu = static_cast<int>(series.int64(1));
                           s.metric = series.text(2);
                           s.unit = series.text(3);
                           points.bind(1, series.int64(0));
                           GPUSCOPE_RETURN_IF_ERROR(for_each_row(points, [&]() -> Status {
                             s.t_s.push_back(points.real(0));
                             s.values.push_back(points.real(1));
                             return Status{};
                           }));
                           points.reset();
                           data.telemetry.push_back(std::move(s));
                           return Status{};
                         });
        !telemetry_read.ok())
      return telemetry_read;
  }
  {
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement stmt, db_->prepare(fmt::format(
                            "SELECT gpu, severity, {}, text, {} FROM findings WHERE run_id = ? "
                            "ORDER BY id",
                            code_column(schema_version_), details_column(schema_version_))));
    stmt.bind(1, id);
    GPUSCOPE_RETURN_IF_ERROR(for_each_row(stmt, [&]() -> Status {
      Finding f;
      f.gpu = optional_int(stmt, 0);
      auto severity = detail::parse_severity(stmt.text(1));
      if (!severity) {
        return Status(Code::data_error, fmt::format("a finding has severity '{}'", stmt.text(1)));
      }
      f.severity = *severity;
      f.id = stmt.text(2);
      f.title = stmt.text(3);
      if (!stmt.is_null(4)) {
        GPUSCOPE_ASSIGN_OR_RETURN(nlohmann::json details,
                                  detail::parse_json_column(stmt.text(4), "a finding's details"));
        if (!detail::read_finding_details(details, f)) {
          return Status(Code::data_error, "a finding's details are malformed");
        }
      }
      data.findings.push_back(std::move(f));
      return Status{};
    }));
  }
  return data;
}

namespace names {

std::string_view telemetry_unit(std::string_view metric) {
  static constexpr std::pair<std::string_view, std::string_view> kUnits[] = {
      {kPowerW, "W"},
      {kSmClockHz, "Hz"},
      {kMemoryClockHz, "Hz"},
      {kTemperatureC, "degC"},
      {kMemoryTemperatureC, "degC"},
      {kSmActivity, "1"},
      {kTensorActivity, "1"},
      {kDramActivity, "1"},
      {kGpuUtilization, "1"},
      {kMemoryUsedBytes, "B"},
      {kClockEventReasons, "mask"},
      // Further readings `gpuscope monitor` records.
      {"power_average_w", "W"},
      {"power_instant_w", "W"},
      {"energy_j", "J"},
      {"memory_free_bytes", "B"},
      {"pcie_rx_bytes_per_s", "B/s"},
      {"pcie_tx_bytes_per_s", "B/s"},
      {"memory_utilization", "1"},
      {"graphics_activity", "1"},
      {"sm_occupancy", "1"},
      {"fp16_activity", "1"},
      {"fp32_activity", "1"},
      {"fp64_activity", "1"},
      {"throttle_sw_power_cap_s", "s"},
      {"throttle_sw_thermal_s", "s"},
      {"throttle_hw_thermal_s", "s"},
      {"throttle_hw_power_brake_s", "s"},
      {"ecc_corrected_errors", "count"},
      {"ecc_uncorrected_errors", "count"},
  };
  for (const auto& [name, unit] : kUnits) {
    if (name == metric) return unit;
  }
  return "";
}

}  // namespace names
}  // namespace gpuscope::store
