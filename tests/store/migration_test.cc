// A store written by an older gpuscope opens in this one: read as it is, migrated in place when
// opened for writing, its data intact.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/store.h"
#include "store/schema.h"
#include "store/sqlite_db.h"
#include "store_test_util.h"

namespace gpuscope::store {
namespace {

using testing::ScratchDir;

// Loads the frozen version-1 store (tests/store/data/store_v1.sql) into a new file.
std::string make_v1_store(const ScratchDir& dir) {
  std::string path = dir.file("v1.db");
  auto db = detail::Database::open(path, detail::Database::Mode::read_write_create);
  EXPECT_TRUE(db.ok());
  Status loaded = (*db)->exec(testing::read_bytes(GPUSCOPE_STORE_TEST_DATA "/store_v1.sql"));
  EXPECT_TRUE(loaded.ok()) << loaded.to_string();
  return path;
}

void expect_v1_data(const RunData& run) {
  EXPECT_EQ(run.run.kind, "burn");
  EXPECT_DOUBLE_EQ(run.run.started_unix_s, 1795840000.5);
  EXPECT_EQ(run.run.host, "node7");
  EXPECT_FALSE(run.run.label.has_value());
  ASSERT_EQ(run.run.gpus.size(), 1u);
  EXPECT_EQ(run.run.gpus[0].uuid, "GPU-d57df324-956d-e245-79f7-9af168147882");
  ASSERT_TRUE(run.run.gpus[0].peak.has_value());
  EXPECT_DOUBLE_EQ(run.run.gpus[0].peak->flops_per_s.at("bf16"), 989.4e12);
  ASSERT_EQ(run.run.configurations.size(), 1u);
  EXPECT_EQ(run.run.configurations[0].params["n"], 8192);
  ASSERT_EQ(run.measurements.size(), 2u);
  EXPECT_EQ(run.measurements[0].configuration, "n8192");
  EXPECT_DOUBLE_EQ(*run.measurements[0].value, 711.5e12);
  EXPECT_EQ(run.measurements[0].tags["precision"], "bf16");
  EXPECT_FALSE(run.measurements[1].value.has_value());
  EXPECT_EQ(run.measurements[1].tags["skipped"], "no such precision");
  ASSERT_EQ(run.telemetry.size(), 1u);
  EXPECT_THAT(run.telemetry[0].t_s, ::testing::ElementsAre(0.0, 1.0, 2.0));
  EXPECT_THAT(run.telemetry[0].values, ::testing::ElementsAre(75.0, 699.5, 700.0));
  ASSERT_EQ(run.findings.size(), 1u);
  EXPECT_EQ(run.findings[0].severity, Severity::warning);
  EXPECT_EQ(run.findings[0].id, "");  // version 1 had no codes
}

TEST(MigrationTest, MigrationsAreNumberedInOrder) {
  auto steps = detail::migrations();
  ASSERT_FALSE(steps.empty());
  for (std::size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].version, int(i) + 1);
  EXPECT_EQ(steps.back().version, kStoreSchemaVersion);
}

TEST(MigrationTest, VersionOneStoreIsReadWithoutBeingChanged) {
  ScratchDir dir;
  std::string path = make_v1_store(dir);
  std::string before = testing::read_bytes(path);
  {
    StoreOptions read_only;
    read_only.read_only = true;
    auto store = Store::open(path, read_only);
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    EXPECT_EQ((*store)->schema_version(), 1);
    auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs.ok()) << runs.status().to_string();
    ASSERT_EQ(runs->size(), 1u);
    auto run = (*store)->load_run((*runs)[0].id);
    ASSERT_TRUE(run.ok()) << run.status().to_string();
    expect_v1_data(*run);
  }
  EXPECT_EQ(testing::read_bytes(path), before);
}

TEST(MigrationTest, VersionOneStoreIsMigratedWithItsDataIntact) {
  ScratchDir dir;
  std::string path = make_v1_store(dir);
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    EXPECT_EQ((*store)->schema_version(), kStoreSchemaVersion);
    auto run = (*store)->load_run(1);
    ASSERT_TRUE(run.ok()) << run.status().to_string();
    expect_v1_data(*run);
    // What version 2 added works on the migrated file.
    RunData labelled = testing::sample_run();
    auto id = (*store)->write(labelled);
    ASSERT_TRUE(id.ok()) << id.status().to_string();
    auto back = (*store)->load_run(*id);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->run.label, "before the fan swap");
    EXPECT_EQ(back->findings[0].id, "throttled");
    EXPECT_EQ(back->findings[0].subjects, labelled.findings[0].subjects);  // what version 3 added
  }
  auto db = detail::Database::open(path, detail::Database::Mode::read_only);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*(*db)->query_int("PRAGMA user_version"), kStoreSchemaVersion);
  EXPECT_EQ(*(*db)->query_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = "
                              "'measurements_by_run_name'"),
            1);
  EXPECT_EQ(*(*db)->query_text("PRAGMA journal_mode"), "wal");
  // Opening again finds nothing to do.
  auto again = Store::open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->schema_version(), kStoreSchemaVersion);
}

}  // namespace
}  // namespace gpuscope::store
