-- A results store as gpuscope 0.1.0 wrote it at schema version 1, frozen here so that the
-- migration test opens what an older gpuscope really left on disk (never edit: add a file for a
-- newer version instead). Loaded with sqlite3_exec into an empty file by
-- tests/store/migration_test.cc.
PRAGMA application_id = 1735422819;  -- 0x67707363, "gpsc"
PRAGMA user_version = 1;
BEGIN;
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
INSERT INTO gpuscope_store (key, value) VALUES ('created_by', 'gpuscope 0.1.0');
INSERT INTO gpuscope_store (key, value) VALUES ('created_unix_s', '1795840000');

INSERT INTO runs (id, kind, started_unix_s, ended_unix_s, host, command_line, gpuscope_version,
                  driver_version, cuda_driver_version, cuda_runtime_version, torch_version)
VALUES (1, 'burn', 1795840000.5, 1795840130.0, 'node7', 'gpuscope burn --store results.db',
        '0.1.0', '580.159.04', '13.0', '13.0', NULL);
INSERT INTO gpus (run_id, gpu, name, uuid, pci_bus_id, compute_capability, sm_count,
                  memory_total_bytes, power_limit_w, power_min_limit_w, power_max_limit_w,
                  sm_clock_max_hz, peak_json, details_json)
VALUES (1, 0, 'NVIDIA H100 80GB HBM3', 'GPU-d57df324-956d-e245-79f7-9af168147882',
        '00000000:00:06.0', '9.0', 132, 85520809984, 700.0, 200.0, 700.0, 1980000000.0,
        '{"estimated":false,"flops_per_s":{"bf16":989400000000000.0},"model":"H100 SXM5 80GB","source":"datasheet"}',
        '{}');
INSERT INTO configurations (id, run_id, name, params_json) VALUES (1, 1, 'n8192', '{"n":8192}');
INSERT INTO measurements (run_id, gpu, configuration_id, name, value, unit, tags_json)
VALUES (1, 0, 1, 'gemm_flop_per_s', 711500000000000.0, 'FLOP/s',
        '{"precision":"bf16","stat":"median"}');
INSERT INTO measurements (run_id, gpu, configuration_id, name, value, unit, tags_json)
VALUES (1, 0, NULL, 'gemm_flop_per_s', NULL, 'FLOP/s',
        '{"precision":"int4","skipped":"no such precision"}');
INSERT INTO telemetry_series (id, run_id, gpu, metric, unit) VALUES (1, 1, 0, 'power_w', 'W');
INSERT INTO telemetry (series_id, t_s, value) VALUES (1, 0.0, 75.0), (1, 1.0, 699.5), (1, 2.0, 700.0);
INSERT INTO findings (run_id, gpu, severity, text)
VALUES (1, 0, 'warning', 'bf16 was throttled for 3 s (sw_power_cap)');
COMMIT;
