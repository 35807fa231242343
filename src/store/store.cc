// Opening a store (the checks that keep foreign and damaged files untouched) and writing to it.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "gpuscope/store.h"
#include "store/file_probe.h"
#include "store/record_json.h"
#include "store/schema.h"
#include "store/sqlite_db.h"

namespace gpuscope::store {
namespace {

using detail::Database;
using detail::Statement;
using detail::Transaction;

constexpr std::string_view kUntouched = "The file was not changed.";

Status not_ours(const std::string& path, std::string_view why) {
  return Status(Code::data_error,
                fmt::format("{} is not a gpuscope results store: {}. {}", path, why, kUntouched));
}

Status damaged(const std::string& path, std::string_view why) {
  return Status(Code::data_error,
                fmt::format("the results store {} is damaged: {}. {}", path, why, kUntouched));
}

// A failed read of a store: damaged when SQLite found its content wrong, but an I/O failure
// (a read-only place SQLite could not use, permissions, a disk error) is said as such: a healthy
// store is never called damaged.
Status unreadable_or_damaged(const std::string& path, const Status& failed, std::string_view why) {
  if (failed.code() == Code::io_error || failed.code() == Code::out_of_memory ||
      failed.code() == Code::timeout) {
    return failed.with_context(fmt::format("cannot read the results store {}", path));
  }
  return damaged(path, why);
}

// Everything that decides whether an existing, non-empty file may be used, done without ever
// opening it for writing: first its header bytes, then SQLite in read-only mode.
Status check_existing_store(const std::string& path, const detail::FileProbe& probe) {
  if (!probe.sqlite) return not_ours(path, "it is not a SQLite database");
  if (probe.application_id != detail::kApplicationId) {
    return not_ours(path, probe.application_id == 0
                              ? "it is a SQLite database without gpuscope's application id"
                              : fmt::format("it is a SQLite database of another application "
                                            "(application_id 0x{:08x})",
                                            probe.application_id));
  }
  auto db = Database::open(path, Database::Mode::read_only);
  if (!db.ok()) return db.status();
  // From here on, any failure means the file is not the store it claims to be.
  auto marker = (*db)->query_text("SELECT value FROM gpuscope_store WHERE key = 'format'");
  if (!marker.ok()) {
    return unreadable_or_damaged(path, marker.status(), marker.status().message());
  }
  if (*marker != detail::kFormatMarker)
    return damaged(path, "its gpuscope_store marker is missing");
  auto version = (*db)->query_int("PRAGMA user_version");
  if (!version.ok()) {
    return unreadable_or_damaged(path, version.status(), version.status().message());
  }
  if (*version > kStoreSchemaVersion) {
    return Status(Code::data_error,
                  fmt::format("the results store {} was written by a newer gpuscope (store schema "
                              "{}; this gpuscope reads up to {}). Use a newer gpuscope. {}",
                              path, *version, kStoreSchemaVersion, kUntouched));
  }
  auto check = (*db)->query_text("PRAGMA quick_check(1)");
  if (!check.ok()) return unreadable_or_damaged(path, check.status(), check.status().message());
  if (*check != "ok") return damaged(path, fmt::format("SQLite quick_check: {}", *check));
  return Status{};
}

// Switching a new store to WAL needs every other connection out of the file for a moment, and
// SQLite answers "database is locked" at once instead of calling the busy handler: several
// gpuscope processes creating one store together (a study's steps, two monitors) meet here.
// Retry for as long as the busy timeout would have waited.
Result<std::string> switch_to_wal(Database& db) {
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  auto pause = std::chrono::milliseconds(2);
  for (;;) {
    auto journal = db.query_text("PRAGMA journal_mode = WAL");
    if (journal.ok() || journal.status().code() != Code::timeout || Clock::now() > give_up) {
      return journal;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

Status configure_for_writing(Database& db, const StoreOptions& options) {
  // WAL: readers (a report, a live view) never block the writer; NORMAL sync is durable in WAL
  // mode except for the last transactions before a power cut.
  GPUSCOPE_ASSIGN_OR_RETURN(std::string journal, switch_to_wal(db));
  if (journal != "wal") {
    return Status(
        Code::io_error,
        fmt::format("the store could not switch to WAL mode (journal mode is {})", journal));
  }
  GPUSCOPE_RETURN_IF_ERROR(db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON"));
  if (options.max_size_bytes) {
    GPUSCOPE_ASSIGN_OR_RETURN(std::int64_t page_size, db.query_int("PRAGMA page_size"));
    auto pages =
        static_cast<std::int64_t>(*options.max_size_bytes) / std::max<std::int64_t>(page_size, 1);
    GPUSCOPE_RETURN_IF_ERROR(
        db.exec(fmt::format("PRAGMA max_page_count = {}", std::max<std::int64_t>(pages, 1))));
  }
  return Status{};
}

Status require_finite(double value, std::string_view what) {
  if (std::isfinite(value)) return Status{};
  return Status(Code::invalid_argument,
                fmt::format("{} is not a finite number: leave a missing value out instead", what));
}

}  // namespace

Store::Store(std::string path, std::unique_ptr<detail::Database> db, int schema_version)
    : path_(std::move(path)), db_(std::move(db)), schema_version_(schema_version) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const std::string& path, const StoreOptions& options) {
  GPUSCOPE_ASSIGN_OR_RETURN(detail::FileProbe probe, detail::probe_file(path));
  if (!probe.exists && options.read_only) {
    return Status(Code::not_found, fmt::format("there is no results store at {}", path));
  }
  // An empty file is what `touch store.db` makes: a store not yet initialized.
  bool fresh = !probe.exists || probe.size_bytes == 0;
  if (fresh && options.read_only) return not_ours(path, "the file is empty");
  if (!fresh) GPUSCOPE_RETURN_IF_ERROR(check_existing_store(path, probe));

  Database::Mode mode = options.read_only ? Database::Mode::read_only
                        : fresh           ? Database::Mode::read_write_create
                                          : Database::Mode::read_write;
  auto db = Database::open(path, mode);
  if (!db.ok()) return db.status().with_context("results store");
  if (!options.read_only) {
    // Migrating first writes a new store's header (application id) straight into the file,
    // before WAL mode would hold it in the -wal file where probe_file cannot see it.
    Status ready = detail::migrate(**db);
    if (ready.ok()) ready = configure_for_writing(**db, options);
    if (!ready.ok()) return ready.with_context(fmt::format("results store {}", path));
  }
  GPUSCOPE_ASSIGN_OR_RETURN(std::int64_t version, (*db)->query_int("PRAGMA user_version"));
  return std::unique_ptr<Store>(new Store(path, std::move(*db), static_cast<int>(version)));
}

// --- writing ----------------------------------------------------------------------------------

Status Store::write_run_rows(const RunRecord& run, RunId* id) {
  GPUSCOPE_ASSIGN_OR_RETURN(
      Statement insert_run,
      db_->prepare("INSERT INTO runs (kind, started_unix_s, ended_unix_s, host, command_line, "
                   "gpuscope_version, driver_version, cuda_driver_version, cuda_runtime_version, "
                   "torch_version, label) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  GPUSCOPE_RETURN_IF_ERROR(require_finite(run.started_unix_s, "started_unix_s"));
  insert_run.bind(1, run.kind)
      .bind(2, run.started_unix_s)
      .bind(3, run.ended_unix_s)
      .bind(4, run.host)
      .bind(5, run.command_line)
      .bind(6, run.gpuscope_version)
      .bind(7, run.driver_version)
      .bind(8, run.cuda_driver_version)
      .bind(9, run.cuda_runtime_version)
      .bind(10, run.torch_version)
      .bind(11, run.label);
  GPUSCOPE_RETURN_IF_ERROR(insert_run.run());
  *id = db_->last_insert_rowid();

  GPUSCOPE_ASSIGN_OR_RETURN(
      Statement insert_gpu,
      db_->prepare(
          "INSERT INTO gpus (run_id, gpu, name, uuid, pci_bus_id, compute_capability, "
          "sm_count, memory_total_bytes, power_limit_w, power_default_limit_w, "
          "power_min_limit_w, power_max_limit_w, sm_clock_max_hz, memory_clock_max_hz, "
          "temperature_slowdown_c, pcie_generation_max, pcie_width_max, peak_json, "
          "details_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  std::set<int> gpus_seen;
  for (const GpuRecord& g : run.gpus) {
    if (!gpus_seen.insert(g.gpu).second) {
      return Status(Code::invalid_argument,
                    fmt::format("GPU {} is listed twice in the run", g.gpu));
    }
    std::optional<std::int64_t> memory;
    if (g.memory_total_bytes) memory = static_cast<std::int64_t>(*g.memory_total_bytes);
    std::optional<std::string> peak;
    if (g.peak) peak = detail::peak_to_json(*g.peak).dump();
    insert_gpu.bind(1, *id)
        .bind(2, g.gpu)
        .bind(3, g.name)
        .bind(4, g.uuid)
        .bind(5, g.pci_bus_id)
        .bind(6, g.compute_capability)
        .bind(7, g.sm_count)
        .bind(8, memory)
        .bind(9, g.power_limit_w)
        .bind(10, g.power_default_limit_w)
        .bind(11, g.power_min_limit_w)
        .bind(12, g.power_max_limit_w)
        .bind(13, g.sm_clock_max_hz)
        .bind(14, g.memory_clock_max_hz)
        .bind(15, g.temperature_slowdown_c)
        .bind(16, g.pcie_generation_max)
        .bind(17, g.pcie_width_max)
        .bind(18, peak)
        .bind(19, g.details.is_null() ? std::string("{}") : g.details.dump());
    GPUSCOPE_RETURN_IF_ERROR(insert_gpu.run());
  }

  GPUSCOPE_ASSIGN_OR_RETURN(
      Statement insert_config,
      db_->prepare("INSERT INTO configurations (run_id, name, params_json) VALUES (?, ?, ?)"));
  std::set<std::string> configs_seen;
  for (const Configuration& c : run.configurations) {
    if (!configs_seen.insert(c.name).second) {
      return Status(Code::invalid_argument,
                    fmt::format("configuration '{}' is listed twice in the run", c.name));
    }
    insert_config.bind(1, *id).bind(2, c.name).bind(3, c.params.dump());
    GPUSCOPE_RETURN_IF_ERROR(insert_config.run());
  }
  return Status{};
}

Status Store::write_measurement_rows(RunId run, const std::vector<Measurement>& rows) {
  std::map<std::string, std::int64_t> config_ids;
  {
    GPUSCOPE_ASSIGN_OR_RETURN(Statement configs,
                              db_->prepare("SELECT id, name FROM configurations WHERE run_id = ?"));
    configs.bind(1, run);
    for (;;) {
      GPUSCOPE_ASSIGN_OR_RETURN(bool row, configs.step());
      if (!row) break;
      config_ids[configs.text(1)] = configs.int64(0);
    }
  }
  GPUSCOPE_ASSIGN_OR_RETURN(
      Statement insert,
      db_->prepare("INSERT INTO measurements (run_id, gpu, configuration_id, name, value, unit, "
                   "tags_json) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  for (const Measurement& m : rows) {
    std::optional<std::int64_t> config;
    if (!m.configuration.empty()) {
      auto it = config_ids.find(m.configuration);
      if (it == config_ids.end()) {
        return Status(Code::invalid_argument,
                      fmt::format("measurement '{}' names configuration '{}', which run {} lacks",
                                  m.name, m.configuration, run));
      }
      config = it->second;
    }
    if (m.value) GPUSCOPE_RETURN_IF_ERROR(require_finite(*m.value, m.name));
    insert.bind(1, run)
        .bind(2, m.gpu)
        .bind(3, config)
        .bind(4, m.name)
        .bind(5, m.value)
        .bind(6, m.unit)
        .bind(7, m.tags.is_null() ? std::string("{}") : m.tags.dump());
    GPUSCOPE_RETURN_IF_ERROR(insert.run());
  }
  return Status{};
}

Status Store::write_telemetry_rows(RunId run, const std::vector<TelemetrySample>& samples) {
  std::map<std::pair<int, std::string>, std::int64_t> series;
  {
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement existing,
        db_->prepare("SELECT id, gpu, metric FROM telemetry_series WHERE run_id = ?"));
    existing.bind(1, run);
    for (;;) {
      GPUSCOPE_ASSIGN_OR_RETURN(bool row, existing.step());
      if (!row) break;
      series[{static_cast<int>(existing.int64(1)), existing.text(2)}] = existing.int64(0);
    }
  }
  GPUSCOPE_ASSIGN_OR_RETURN(
      Statement insert_series,
      db_->prepare("INSERT INTO telemetry_series (run_id, gpu, metric, unit) VALUES (?, ?, ?, ?)"));
  GPUSCOPE_ASSIGN_OR_RETURN(
      Statement insert_point,
      db_->prepare("INSERT INTO telemetry (series_id, t_s, value) VALUES (?, ?, ?)"));
  for (const TelemetrySample& s : samples) {
    GPUSCOPE_RETURN_IF_ERROR(require_finite(s.t_s, "telemetry time"));
    GPUSCOPE_RETURN_IF_ERROR(require_finite(s.value, s.metric));
    auto key = std::make_pair(s.gpu, s.metric);
    auto it = series.find(key);
    if (it == series.end()) {
      insert_series.bind(1, run)
          .bind(2, s.gpu)
          .bind(3, s.metric)
          .bind(4, names::telemetry_unit(s.metric));
      GPUSCOPE_RETURN_IF_ERROR(insert_series.run());
      it = series.emplace(key, db_->last_insert_rowid()).first;
    }
    insert_point.bind(1, it->second).bind(2, s.t_s).bind(3, s.value);
    GPUSCOPE_RETURN_IF_ERROR(insert_point.run());
  }
  return Status{};
}

Status Store::write_finding_rows(RunId run, const std::vector<Finding>& findings) {
  GPUSCOPE_ASSIGN_OR_RETURN(
      Statement insert,
      db_->prepare("INSERT INTO findings (run_id, gpu, severity, code, text, details) "
                   "VALUES (?, ?, ?, ?, ?, ?)"));
  for (const Finding& f : findings) {
    insert.bind(1, run)
        .bind(2, f.gpu)
        .bind(3, severity_name(f.severity))
        .bind(4, f.id)
        .bind(5, f.title)
        .bind(6, detail::finding_details(f).dump());
    GPUSCOPE_RETURN_IF_ERROR(insert.run());
  }
  return Status{};
}

namespace {

// Runs `body` in one transaction: committed when it succeeds, rolled back when it fails.
template <typename Body>
Status in_transaction(Database& db, Body&& body) {
  GPUSCOPE_ASSIGN_OR_RETURN(Transaction transaction, Transaction::begin(db));
  GPUSCOPE_RETURN_IF_ERROR(body());
  return transaction.commit();
}

Status require_run(Database& db, RunId run) {
  GPUSCOPE_ASSIGN_OR_RETURN(Statement exists, db.prepare("SELECT 1 FROM runs WHERE id = ?"));
  exists.bind(1, run);
  GPUSCOPE_ASSIGN_OR_RETURN(bool found, exists.step());
  if (!found) return Status(Code::not_found, fmt::format("the store has no run {}", run));
  return Status{};
}

}  // namespace

Result<RunId> Store::write_run(const RunRecord& run) {
  RunId id = 0;
  GPUSCOPE_RETURN_IF_ERROR(in_transaction(*db_, [&] { return write_run_rows(run, &id); }));
  return id;
}

Status Store::finish_run(RunId run, double ended_unix_s) {
  GPUSCOPE_RETURN_IF_ERROR(require_finite(ended_unix_s, "ended_unix_s"));
  return in_transaction(*db_, [&]() -> Status {
    GPUSCOPE_RETURN_IF_ERROR(require_run(*db_, run));
    GPUSCOPE_ASSIGN_OR_RETURN(Statement update,
                              db_->prepare("UPDATE runs SET ended_unix_s = ? WHERE id = ?"));
    update.bind(1, ended_unix_s).bind(2, run);
    return update.run();
  });
}

Status Store::add_measurements(RunId run, const std::vector<Measurement>& rows) {
  return in_transaction(*db_, [&]() -> Status {
    GPUSCOPE_RETURN_IF_ERROR(require_run(*db_, run));
    return write_measurement_rows(run, rows);
  });
}

Status Store::add_telemetry(RunId run, const std::vector<TelemetrySample>& samples) {
  return in_transaction(*db_, [&]() -> Status {
    GPUSCOPE_RETURN_IF_ERROR(require_run(*db_, run));
    return write_telemetry_rows(run, samples);
  });
}

Status Store::add_findings(RunId run, const std::vector<Finding>& findings) {
  return in_transaction(*db_, [&]() -> Status {
    GPUSCOPE_RETURN_IF_ERROR(require_run(*db_, run));
    return write_finding_rows(run, findings);
  });
}

Result<RunId> Store::write(const RunData& data) {
  RunId id = 0;
  if (Status written = in_transaction(
          *db_,
          [&]() -> Status {
            GPUSCOPE_RETURN_IF_ERROR(write_run_rows(data.run, &id));
            GPUSCOPE_RETURN_IF_ERROR(write_measurement_rows(id, data.measurements));
            std::vector<TelemetrySample> samples;
            for (const TelemetrySeries& s : data.telemetry) {
              if (s.t_s.size() != s.values.size()) {
                return Status(Code::invalid_argument,
                              fmt::format("telemetry {} of GPU {}: {} times but {} values",
                                          s.metric, s.gpu, s.t_s.size(), s.values.size()));
              }
              for (std::size_t i = 0; i < s.t_s.size(); ++i) {
                samples.push_back({s.gpu, s.t_s[i], s.metric, s.values[i]});
              }
            }
            GPUSCOPE_RETURN_IF_ERROR(write_telemetry_rows(id, samples));
            return write_finding_rows(id, data.findings);
          });
      !written.ok())
    return written;
  return id;
}

}  // namespace gpuscope::store
