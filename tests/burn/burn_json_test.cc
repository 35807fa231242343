// The JSON of `gpuscope burn`: its schema is pinned by a golden file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "burn_test_util.h"
#include "gpuscope/burn_report.h"
#include "sample_report.h"

namespace gpuscope {
namespace {

TEST(BurnJson, MatchesTheGoldenSchemaV1) {
  const nlohmann::json actual = burn_to_json(burn::testing::sample_report());
  std::ifstream in(burn::testing::burn_fixture("burn_schema_v1.json"));
  ASSERT_TRUE(in) << "missing golden file; this is the output:\n" << actual.dump(2);
  const nlohmann::json golden = nlohmann::json::parse(in);
  EXPECT_EQ(actual, golden) << "burn JSON changed. If on purpose, bump kBurnSchemaVersion when a "
                               "field was renamed or removed, and update the golden file.\n"
                            << actual.dump(2);
}

TEST(BurnJson, SaysWhetherTheRunPassed) {
  burn::Report report = burn::testing::sample_report();
  nlohmann::json j = burn_to_json(report);
  EXPECT_EQ(j["schema_version"], kBurnSchemaVersion);
  EXPECT_EQ(j["kind"], "gpuscope.burn");
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["exit_code"], 1);
  report.targets.resize(1);
  j = burn_to_json(report);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["exit_code"], 0);
  // Absent readings are left out, not null or 0.
  const nlohmann::json& fp8 = j["targets"][0]["gemm"][1];
  EXPECT_EQ(fp8["status"], "skipped");
  EXPECT_FALSE(fp8.contains("flop_per_s"));
  EXPECT_FALSE(fp8.contains("power_average_w"));
}

// `gpuscope burn --json` recorded on the H100 still reads as schema v1.
TEST(BurnJson, TheRecordedH100RunHasTheSchemaFields) {
  std::ifstream in(burn::testing::burn_fixture("h100_burn_recorded_2026-11-22.json"));
  ASSERT_TRUE(in);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema_version"], kBurnSchemaVersion);
  EXPECT_EQ(j["kind"], "gpuscope.burn");
  EXPECT_EQ(j["exit_code"], 0);
  const nlohmann::json& t = j["targets"][0];
  EXPECT_EQ(t["gpu_name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t["outcome"], "passed");
  const nlohmann::json& bf16 = t["gemm"][1];
  EXPECT_EQ(bf16["precision"], "bf16");
  EXPECT_GT(bf16["flop_per_s"]["median"].get<double>(), 600e12);
  EXPECT_GT(bf16["energy_j"].get<double>(), 0);
  EXPECT_GT(bf16["flop_per_joule"].get<double>(), 0);
  EXPECT_TRUE(bf16["throttle_seconds"].contains("sw_power_cap"));
  EXPECT_EQ(t["memory"].size(), 4u);
}

TEST(BurnJson, ErrorsHaveTheSameSchemaVersion) {
  const nlohmann::json j = burn_error_json(Status(Code::no_driver, "no NVML"));
  EXPECT_EQ(j["schema_version"], kBurnSchemaVersion);
  EXPECT_EQ(j["error"]["code"], "no_driver");
  EXPECT_EQ(j["error"]["message"], "no NVML");
}

}  // namespace
}  // namespace gpuscope
