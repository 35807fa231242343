// The JSON of `gpuscope burn`: its schema is pinned by a golden file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <vector>

#include "burn_test_util.h"
#include "gpuscope/burn_report.h"
#include "gpuscope/store.h"
#include "sample_report.h"

namespace gpuscope {
namespace {

using ::testing::HasSubstr;

nlohmann::json burn_golden() {
  std::ifstream in(burn::testing::burn_fixture("burn_schema_v1.json"));
  return nlohmann::json::parse(in);
}

// Two whole GPUs joined by NVLink, as burn's interconnect step reports them.
burn::Report report_with_interconnect() {
  burn::Report report = burn::testing::sample_report();
  burn::InterconnectReport ic;
  ic.gpus = {"GPU 0", "GPU 1"};
  ic.links = {{0, 1, nvml::GpuLink{18, true, std::string("SYS")}}};
  ic.all_reduce = {{2, 1u << 20, 20, 4.5e-5, 23.3e9, 23.3e9}};
  ic.peer_copies = {{0, 1, true, 1u << 28, 7.1e-4, 378e9}, {1, 0, true, 1u << 28, 7.2e-4, 373e9}};
  ic.problems = {"GPU 1: a slow start"};
  ic.ok = true;
  report.interconnect = ic;
  return report;
}

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

// The one reader gives back what the writer wrote: the golden file, written again from what
// was read, is the golden file.
TEST(BurnJsonRead, ReadsBackTheGoldenFileExactly) {
  const nlohmann::json golden = burn_golden();
  auto read = burn_from_json(golden);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(burn_to_json(*read), golden) << burn_to_json(*read).dump(2);
  ASSERT_EQ(read->targets.size(), 3u);
  EXPECT_EQ(read->targets[1].target.label(), "GPU 1 MIG 3g.20gb (GI 1 CI 0)");
  EXPECT_EQ(read->targets[0].gemm[0].errors.total(), 0u);
  EXPECT_EQ(read->targets[1].gemm[0].errors.total(), 1u);
}

TEST(BurnJsonRead, ReadsBackTheInterconnect) {
  const nlohmann::json written = burn_to_json(report_with_interconnect());
  auto read = burn_from_json(written);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(burn_to_json(*read), written);
  ASSERT_TRUE(read->interconnect.has_value());
  ASSERT_EQ(read->interconnect->peer_copies.size(), 2u);
  EXPECT_EQ(read->interconnect->peer_copies[1].source, 1);
  EXPECT_EQ(read->interconnect->links[0].link.label(), "NV18");
}

TEST(BurnJsonRead, ReadsTheRecordedH100Run) {
  std::ifstream in(burn::testing::burn_fixture("h100_burn_recorded_2026-11-22.json"));
  auto read = burn_from_json(nlohmann::json::parse(in));
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  ASSERT_EQ(read->targets.size(), 1u);
  const burn::PrecisionRow& bf16 = read->targets[0].gemm[1];
  EXPECT_EQ(bf16.precision, Precision::bf16);
  ASSERT_TRUE(bf16.flop_per_second_median.has_value());
  EXPECT_GT(*bf16.flop_per_second_median, 600e12);
  EXPECT_EQ(read->targets[0].memory.size(), 4u);
}

// A document that does not follow the format is refused naming the field, not half read.
TEST(BurnJsonRead, RefusesAMalformedDocumentNamingTheField) {
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> spoil;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"a rate as text",
       [](auto& j) { j["targets"][0]["gemm"][0]["flop_per_s"]["median"] = "fast"; },
       "burn.targets[0].gemm[0].flop_per_s.median: expected a number"},
      {"a row without its precision",
       [](auto& j) { j["targets"][0]["gemm"][0].erase("precision"); },
       "burn.targets[0].gemm[0].precision: missing"},
      {"an unknown precision", [](auto& j) { j["targets"][0]["gemm"][0]["precision"] = "fp4"; },
       "burn.targets[0].gemm[0].precision: 'fp4' is not a precision"},
      {"an unknown outcome", [](auto& j) { j["targets"][2]["outcome"] = "exploded"; },
       "burn.targets[2].outcome: 'exploded' is not an outcome"},
      {"targets not a list", [](auto& j) { j["targets"] = 3; }, "burn.targets: expected a list"},
      {"a memory row without its kernel",
       [](auto& j) { j["targets"][0]["memory"][0].erase("kernel"); },
       "burn.targets[0].memory[0].kernel: missing"},
      {"a throttle time as text",
       [](auto& j) { j["targets"][0]["gemm"][0]["throttle_seconds"]["sw_power_cap"] = "long"; },
       "burn.targets[0].gemm[0].throttle_seconds.sw_power_cap: expected a number"},
      {"warnings not strings",
       [](auto& j) {
         j["targets"][0]["warnings"] = {1, 2};
       },
       "burn.targets[0].warnings: expected a list of strings"},
      {"a newer schema", [](auto& j) { j["schema_version"] = 2; },
       "burn schema_version 2 is not one this gpuscope reads (up to 1)"},
      {"another kind", [](auto& j) { j["kind"] = "gpuscope.info"; },
       "not the output of `gpuscope burn --json`"},
  };
  for (const Case& c : cases) {
    nlohmann::json document = burn_golden();
    c.spoil(document);
    auto read = burn_from_json(document);
    EXPECT_EQ(read.code(), Code::data_error) << c.what;
    EXPECT_THAT(read.status().message(), HasSubstr(c.message)) << c.what;
  }
  EXPECT_EQ(burn_from_json(nlohmann::json::array()).code(), Code::data_error);
}

// `burn --store` converts its report directly; a file of its JSON output read later makes the
// same run.
TEST(BurnJsonRead, TheStoredRunIsTheSameFromTheReportAndFromItsJson) {
  const burn::Report report = report_with_interconnect();
  auto from_json = store::runs_from_document(burn_to_json(report));
  ASSERT_TRUE(from_json.ok()) << from_json.status().to_string();
  EXPECT_EQ(store::runs_to_json({store::burn_to_run(report)}), store::runs_to_json(*from_json));
}

TEST(BurnJson, ErrorsHaveTheSameSchemaVersion) {
  const nlohmann::json j = burn_error_json(Status(Code::no_driver, "no NVML"));
  EXPECT_EQ(j["schema_version"], kBurnSchemaVersion);
  EXPECT_EQ(j["error"]["code"], "no_driver");
  EXPECT_EQ(j["error"]["message"], "no NVML");
}

}  // namespace
}  // namespace gpuscope
