#include "store/schema.h"

#include <fmt/format.h>

#include <array>
#include <ctime>

#include "gpuscope/store.h"
#include "gpuscope/version.h"

namespace gpuscope::store::detail {
namespace {

// Version 1: the first store. Published: never edit (tests/store/data/store_v1.sql is a store
// it wrote).
constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE gpuscope_store (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO gpuscope_store (key, value) VALUES ('format', 'gpuscope results store');

CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  started_unix_s REAL NOT NULL,
  ended_unix_s REAL,
  host TEXT NOT NULL,
  command_line TEXT NOT NULL,
  gpuscope_version TEXT NOT NULL,
  driver_version TEXT,
  cuda_driver_version TEXT,
  cuda_runtime_version TEXT,
  torch_version TEXT
);

CREATE TABLE gpus (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  gpu INTEGER NOT NULL,
  name TEXT NOT NULL,
  uuid TEXT NOT NULL,
  pci_bus_id TEXT,
  compute_capability TEXT,
  sm_count INTEGER,
  memory_total_bytes INTEGER,
  power_limit_w REAL,
  power_default_limit_w REAL,
  power_min_limit_w REAL,
  power_max_limit_w REAL,
  sm_clock_max_hz REAL,
  memory_clock_max_hz REAL,
  temperature_slowdown_c REAL,
  pcie_generation_max INTEGER,
  pcie_width_max INTEGER,
  peak_json TEXT,
  details_json TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (run_id, gpu)
);

CREATE TABLE configurations (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  params_json TEXT NOT NULL DEFAULT '{}',
  UNIQUE (run_id, name)
);

CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  gpu INTEGER,
  configuration_id INTEGER REFERENCES configurations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL,
  unit TEXT NOT NULL,
  tags_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX measurements_by_run ON measurements (run_id);

CREATE TABLE telemetry_series (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  gpu INTEGER NOT NULL,
  metric TEXT NOT NULL,
  unit TEXT NOT NULL,
  UNIQUE (run_id, gpu, metric)
);

CREATE TABLE telemetry (
  series_id INTEGER NOT NULL REFERENCES telemetry_series(id) ON DELETE CASCADE,
  t_s REAL NOT NULL,
  value REAL NOT NULL
);
CREATE INDEX telemetry_by_series ON telemetry (series_id, t_s);

CREATE TABLE findings (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  gpu INTEGER,
  severity TEXT NOT NULL CHECK (severity IN ('info', 'warning', 'error')),
  text TEXT NOT NULL
);
)sql";

// Version 2: a person's label for a run, stable codes for findings (so programs can match them
// without parsing text), and measurements looked up by name within a run.
constexpr std::string_view kVersion2 = R"sql(
ALTER TABLE runs ADD COLUMN label TEXT;
ALTER TABLE findings ADD COLUMN code TEXT NOT NULL DEFAULT '';
DROP INDEX measurements_by_run;
CREATE INDEX measurements_by_run_name ON measurements (run_id, name);
)sql";

// Version 3: findings kept whole (gpuscope/analysis.h): evidence with units, the fix, the
// expected gain, confidence and subjects, as JSON beside the code and the title (`text`).
constexpr std::string_view kVersion3 = R"sql(
ALTER TABLE findings ADD COLUMN details TEXT;
)sql";

constexpr std::array<Migration, 3> kMigrations = {{
    {1, "runs, GPUs, configurations, measurements, telemetry, findings", kVersion1},
    {2, "run labels, finding codes, measurements indexed by name", kVersion2},
    {3, "findings with evidence, fix, expected gain and subjects", kVersion3},
}};
static_assert(kMigrations.back().version == kStoreSchemaVersion,
              "append a migration when bumping kStoreSchemaVersion");

}  // namespace

std::span<const Migration> migrations() {
  return kMigrations;
}

Status migrate(Database& db) {
  GPUSCOPE_ASSIGN_OR_RETURN(Transaction transaction, Transaction::begin(db));
  // Read inside the write lock: another process may have migrated it a moment ago.
  GPUSCOPE_ASSIGN_OR_RETURN(std::int64_t at, db.query_int("PRAGMA user_version"));
  if (at >= kStoreSchemaVersion) return transaction.commit();
  bool created = at == 0;
  if (created) {
    GPUSCOPE_RETURN_IF_ERROR(db.exec(
        fmt::format("PRAGMA application_id = {}", static_cast<std::int32_t>(kApplicationId))));
  }
  for (const Migration& step : kMigrations) {
    if (step.version <= at) continue;
    Status applied = db.exec(step.sql);
    if (!applied.ok()) {
      return applied.with_context(
          fmt::format("migrating the store to schema {} ({})", step.version, step.description));
    }
  }
  if (created) {
    GPUSCOPE_ASSIGN_OR_RETURN(
        Statement marker,
        db.prepare("INSERT INTO gpuscope_store (key, value) VALUES ('created_by', ?), "
                   "('created_unix_s', ?)"));
    marker.bind(1, fmt::format("gpuscope {}", gpuscope::version()))
        .bind(2, std::to_string(static_cast<long long>(std::time(nullptr))));
    GPUSCOPE_RETURN_IF_ERROR(marker.run());
  }
  GPUSCOPE_RETURN_IF_ERROR(db.exec(fmt::format("PRAGMA user_version = {}", kStoreSchemaVersion)));
  return transaction.commit();
}

}  // namespace gpuscope::store::detail
