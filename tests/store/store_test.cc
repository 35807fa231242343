// The store keeps what it is given: runs, GPUs, configurations, measurements, telemetry and
// findings come back as they went in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/store.h"
#include "store_test_util.h"

namespace gpuscope::store {
namespace {

using ::testing::ElementsAre;
using testing::ScratchDir;

std::unique_ptr<Store> open_store(const std::string& path, StoreOptions options = {}) {
  auto store = Store::open(path, options);
  EXPECT_TRUE(store.ok()) << store.status().to_string();
  return store.ok() ? std::move(*store) : nullptr;
}

void expect_same_run(const RunData& got, const RunData& want) {
  const RunRecord& a = got.run;
  const RunRecord& b = want.run;
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_DOUBLE_EQ(a.started_unix_s, b.started_unix_s);
  EXPECT_EQ(a.ended_unix_s, b.ended_unix_s);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.command_line, b.command_line);
  EXPECT_EQ(a.gpuscope_version, b.gpuscope_version);
  EXPECT_EQ(a.driver_version, b.driver_version);
  EXPECT_EQ(a.cuda_driver_version, b.cuda_driver_version);
  EXPECT_EQ(a.cuda_runtime_version, b.cuda_runtime_version);
  EXPECT_EQ(a.torch_version, b.torch_version);
  EXPECT_EQ(a.label, b.label);
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    const GpuRecord& x = a.gpus[i];
    const GpuRecord& y = b.gpus[i];
    EXPECT_EQ(x.gpu, y.gpu);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.uuid, y.uuid);
    EXPECT_EQ(x.pci_bus_id, y.pci_bus_id);
    EXPECT_EQ(x.compute_capability, y.compute_capability);
    EXPECT_EQ(x.sm_count, y.sm_count);
    EXPECT_EQ(x.memory_total_bytes, y.memory_total_bytes);
    EXPECT_EQ(x.power_limit_w, y.power_limit_w);
    EXPECT_EQ(x.power_min_limit_w, y.power_min_limit_w);
    EXPECT_EQ(x.power_max_limit_w, y.power_max_limit_w);
    EXPECT_EQ(x.sm_clock_max_hz, y.sm_clock_max_hz);
    EXPECT_EQ(x.temperature_slowdown_c, y.temperature_slowdown_c);
    EXPECT_EQ(x.pcie_generation_max, y.pcie_generation_max);
    EXPECT_EQ(x.pcie_width_max, y.pcie_width_max);
    ASSERT_EQ(x.peak.has_value(), y.peak.has_value());
    if (x.peak) {
      EXPECT_EQ(x.peak->model, y.peak->model);
      EXPECT_EQ(x.peak->flops_per_s, y.peak->flops_per_s);
      EXPECT_EQ(x.peak->memory_bytes_per_s, y.peak->memory_bytes_per_s);
      EXPECT_EQ(x.peak->source, y.peak->source);
    }
    EXPECT_EQ(x.details, y.details);
  }
  ASSERT_EQ(a.configurations.size(), b.configurations.size());
  for (std::size_t i = 0; i < a.configurations.size(); ++i) {
    EXPECT_EQ(a.configurations[i].name, b.configurations[i].name);
    EXPECT_EQ(a.configurations[i].params, b.configurations[i].params);
  }
  ASSERT_EQ(got.measurements.size(), want.measurements.size());
  for (std::size_t i = 0; i < got.measurements.size(); ++i) {
    const Measurement& x = got.measurements[i];
    const Measurement& y = want.measurements[i];
    EXPECT_EQ(x.gpu, y.gpu);
    EXPECT_EQ(x.configuration, y.configuration);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.value, y.value);
    EXPECT_EQ(x.unit, y.unit);
    EXPECT_EQ(x.tags, y.tags);
  }
  ASSERT_EQ(got.telemetry.size(), want.telemetry.size());
  for (std::size_t i = 0; i < got.telemetry.size(); ++i) {
    EXPECT_EQ(got.telemetry[i].gpu, want.telemetry[i].gpu);
    EXPECT_EQ(got.telemetry[i].metric, want.telemetry[i].metric);
    EXPECT_EQ(got.telemetry[i].unit, want.telemetry[i].unit);
    EXPECT_EQ(got.telemetry[i].t_s, want.telemetry[i].t_s);
    EXPECT_EQ(got.telemetry[i].values, want.telemetry[i].values);
  }
  ASSERT_EQ(got.findings.size(), want.findings.size());
  for (std::size_t i = 0; i < got.findings.size(); ++i) {
    EXPECT_EQ(got.findings[i].gpu, want.findings[i].gpu);
    EXPECT_EQ(got.findings[i].severity, want.findings[i].severity);
    EXPECT_EQ(got.findings[i].id, want.findings[i].id);
    EXPECT_EQ(got.findings[i].title, want.findings[i].title);
    // Schema 3 keeps a finding whole: evidence, fix, expected gain, confidence, subjects.
    EXPECT_EQ(analysis::to_json(got.findings[i]), analysis::to_json(want.findings[i]));
  }
}

TEST(StoreTest, NewStoreIsAtTheCurrentSchema) {
  ScratchDir dir;
  auto store = open_store(dir.file("results.db"));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->schema_version(), kStoreSchemaVersion);
  auto runs = store->list_runs();
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
}

TEST(StoreTest, WholeRunRoundTrips) {
  ScratchDir dir;
  RunData sample = testing::sample_run();
  RunId id = 0;
  {
    auto store = open_store(dir.file("results.db"));
    ASSERT_NE(store, nullptr);
    auto written = store->write(sample);
    ASSERT_TRUE(written.ok()) << written.status().to_string();
    id = *written;
  }
  // A second process reads it: reopen, read-only.
  StoreOptions read_only;
  read_only.read_only = true;
  auto store = open_store(dir.file("results.db"), read_only);
  ASSERT_NE(store, nullptr);
  auto loaded = store->load_run(id);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->run.id, id);
  EXPECT_EQ(loaded->source, dir.file("results.db"));
  expect_same_run(*loaded, sample);
}

TEST(StoreTest, RecordsAddedStepByStepRoundTrip) {
  ScratchDir dir;
  auto store = open_store(dir.file("results.db"));
  ASSERT_NE(store, nullptr);
  RunData sample = testing::sample_run();
  RunRecord run = sample.run;
  run.ended_unix_s.reset();
  auto id = store->write_run(run);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  ASSERT_TRUE(store->add_measurements(*id, sample.measurements).ok());
  std::vector<TelemetrySample> samples;
  for (const TelemetrySeries& s : sample.telemetry) {
    // Out of order, as several sampler threads might hand them over.
    for (std::size_t i = s.t_s.size(); i-- > 0;) {
      samples.push_back({s.gpu, s.t_s[i], s.metric, s.values[i]});
    }
  }
  ASSERT_TRUE(store->add_telemetry(*id, samples).ok());
  ASSERT_TRUE(store->add_findings(*id, sample.findings).ok());
  ASSERT_TRUE(store->finish_run(*id, *sample.run.ended_unix_s).ok());
  auto loaded = store->load_run(*id);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  expect_same_run(*loaded, sample);
}

TEST(StoreTest, TelemetryBatchesAppendToTheSameSeries) {
  ScratchDir dir;
  auto store = open_store(dir.file("results.db"));
  ASSERT_NE(store, nullptr);
  RunRecord run = testing::sample_run().run;
  auto id = store->write_run(run);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store->add_telemetry(*id, {{0, 0.0, names::kPowerW, 100}}).ok());
  ASSERT_TRUE(store->add_telemetry(*id, {{0, 1.0, names::kPowerW, 200}}).ok());
  auto loaded = store->load_run(*id);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->telemetry.size(), 1u);
  EXPECT_THAT(loaded->telemetry[0].values, ElementsAre(100, 200));
  EXPECT_EQ(loaded->telemetry[0].unit, "W");
}

TEST(StoreTest, ListsRunsNewestFirst) {
  ScratchDir dir;
  auto store = open_store(dir.file("results.db"));
  ASSERT_NE(store, nullptr);
  RunData older = testing::sample_run();
  RunData newer = testing::sample_run();
  newer.run.started_unix_s += 86400;
  newer.run.label.reset();
  auto a = store->write(older);
  auto b = store->write(newer);
  ASSERT_TRUE(a.ok() && b.ok());
  auto runs = store->list_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].id, *b);
  EXPECT_EQ((*runs)[1].id, *a);
  EXPECT_EQ((*runs)[1].label, "before the fan swap");
  EXPECT_FALSE((*runs)[0].label.has_value());
  EXPECT_THAT((*runs)[0].gpu_names, ElementsAre("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"));
  EXPECT_EQ((*runs)[0].measurement_count, 3);
}

TEST(StoreTest, RefusesInconsistentRecordsAndWritesNothing) {
  ScratchDir dir;
  auto store = open_store(dir.file("results.db"));
  ASSERT_NE(store, nullptr);

  RunData twice = testing::sample_run();
  twice.run.gpus[1].gpu = 0;
  EXPECT_EQ(store->write(twice).code(), Code::invalid_argument);

  RunData unknown_config = testing::sample_run();
  unknown_config.measurements[0].configuration = "n16384";
  EXPECT_EQ(store->write(unknown_config).code(), Code::invalid_argument);

  RunData not_finite = testing::sample_run();
  not_finite.telemetry[0].values[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(store->write(not_finite).code(), Code::invalid_argument);

  auto runs = store->list_runs();
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty()) << "a refused run must leave no trace";
}

TEST(StoreTest, UnknownRunIsNotFound) {
  ScratchDir dir;
  auto store = open_store(dir.file("results.db"));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->load_run(42).code(), Code::not_found);
  EXPECT_EQ(store->add_measurements(42, testing::sample_run().measurements).code(),
            Code::not_found);
  EXPECT_EQ(store->finish_run(42, 1.0).code(), Code::not_found);
}

TEST(StoreTest, ReadOnlyStoreRefusesWrites) {
  ScratchDir dir;
  { ASSERT_NE(open_store(dir.file("results.db")), nullptr); }
  StoreOptions read_only;
  read_only.read_only = true;
  auto store = open_store(dir.file("results.db"), read_only);
  ASSERT_NE(store, nullptr);
  auto written = store->write(testing::sample_run());
  EXPECT_EQ(written.code(), Code::io_error) << written.status().to_string();
}

TEST(StoreTest, ReadOnlyOpenOfAMissingStoreIsNotFound) {
  ScratchDir dir;
  StoreOptions read_only;
  read_only.read_only = true;
  EXPECT_EQ(Store::open(dir.file("missing.db"), read_only).code(), Code::not_found);
  EXPECT_FALSE(std::filesystem::exists(dir.file("missing.db")));
}

StoreOptions read_only() {
  StoreOptions options;
  options.read_only = true;
  return options;
}

// Reading a finished store (a report, a study gathering its steps' stores) leaves nothing beside
// it: a read-only connection to a WAL-mode file makes an empty -wal and a -shm, and cannot
// remove them itself.
TEST(StoreTest, ReadingAFinishedStoreLeavesNoWalFiles) {
  ScratchDir dir;
  const std::string path = dir.file("results.db");
  {
    auto writer = open_store(path);
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->write(testing::sample_run()).ok());
  }
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));
  const std::string before = testing::read_bytes(path);
  {
    auto reader = open_store(path, read_only());
    ASSERT_NE(reader, nullptr);
    auto runs = reader->list_runs();
    ASSERT_TRUE(runs.ok());
    EXPECT_EQ(runs->size(), 1u);
    EXPECT_TRUE(std::filesystem::exists(path + "-shm"));  // SQLite's, while it reads
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
  EXPECT_EQ(testing::read_bytes(path), before);  // the database itself was not written
}

// ... but never from under another connection that uses them.
TEST(StoreTest, ReadingLeavesTheWalFilesOfAnOpenWriterAlone) {
  ScratchDir dir;
  const std::string path = dir.file("results.db");
  { ASSERT_NE(open_store(path), nullptr); }
  auto reader = open_store(path, read_only());  // first: the files are its own to remove
  auto writer = open_store(path);
  ASSERT_NE(reader, nullptr);
  ASSERT_NE(writer, nullptr);
  reader.reset();
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
  EXPECT_TRUE(std::filesystem::exists(path + "-shm"));
  auto id = writer->write(testing::sample_run());
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  auto other = open_store(path, read_only());
  ASSERT_NE(other, nullptr);
  auto seen = other->load_run(*id);
  ASSERT_TRUE(seen.ok()) << seen.status().to_string();
  EXPECT_EQ(seen->run.host, "node7");
  other.reset();
  writer.reset();  // the last connection: SQLite removes them itself
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

TEST(StoreTest, TwoConnectionsShareOneFile) {
  ScratchDir dir;
  auto writer = open_store(dir.file("results.db"));
  auto other = open_store(dir.file("results.db"));
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(other, nullptr);
  auto id = writer->write(testing::sample_run());
  ASSERT_TRUE(id.ok());
  auto seen = other->load_run(*id);
  ASSERT_TRUE(seen.ok()) << seen.status().to_string();
  EXPECT_EQ(seen->run.host, "node7");
}

}  // namespace
}  // namespace gpuscope::store
