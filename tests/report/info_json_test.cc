// The JSON of `gpuscope info`: its schema is pinned by a golden file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "gpuscope/info_report.h"

namespace gpuscope {
namespace {

std::string fixture(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURES) + "/info/" + name;
}

// A hand-made system with every kind of field: present, absent, MIG, failures, a peak.
SystemInfo sample_system() {
  SystemInfo info;
  info.gpuscope_version = "0.1.0";
  info.hostname = "node1";
  info.nvml_library = "libnvidia-ml.so.1";
  info.driver_version = "580.159.04";
  info.nvml_version = "13.580.159.04";
  info.cuda_driver_version = 13000;
  info.cuda_runtime_version = 13000;

  GpuInfo g;
  g.index = 0;
  g.name = "NVIDIA A100-SXM4-40GB";
  g.uuid = "GPU-11111111-2222-3333-4444-555555555555";
  g.pci_bus_id = "00000000:07:00.0";
  g.cc_major = 8;
  g.cc_minor = 0;
  g.sm_count = 108;
  g.cuda_ordinal = 0;
  g.memory_total_bytes = 42949672960ull;
  g.memory_used_bytes = 1048576;
  g.sm_clock_mhz = 1410;
  g.sm_clock_max_mhz = 1410;
  g.power_draw_w = 55.5;
  g.power_limit_w = 400;
  g.power_min_limit_w = 100;
  g.power_max_limit_w = 400;
  g.temperature_c = 31;
  g.temperature_slowdown_c = 90;
  g.pcie_gen_current = 4;
  g.pcie_width_current = 16;
  g.persistence_mode = true;
  g.compute_mode = "default";
  g.ecc_current = true;
  g.ecc_pending = true;
  g.clock_event_reasons = 1;
  g.clock_event_reason_names = {"gpu_idle"};
  g.energy_counter_supported = true;
  g.gpm_supported = false;
  g.mig_current = true;
  g.mig_pending = true;
  g.mig_instances.push_back({1, 0, "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "3g.20gb",
                             "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", 20937965568ull, 42u});
  PeakRates peak;
  peak.model = "A100 SXM4 40GB";
  peak.flops_per_s = {{Precision::fp16, 312e12}, {Precision::fp32, 19.5e12}};
  peak.memory_bandwidth_bytes_per_s = 1.555e12;
  peak.source = "NVIDIA A100 datasheet";
  g.peak = peak;
  g.unavailable.push_back({"power_default_limit", "permission_denied: refused"});
  info.gpus.push_back(g);
  info.failures.push_back({1, Status(Code::gpu_lost, "GPU is lost")});
  return info;
}

TEST(InfoJson, MatchesTheGoldenSchemaV1) {
  nlohmann::json actual = info_to_json(sample_system());
  std::ifstream in(fixture("info_schema_v1.json"));
  ASSERT_TRUE(in) << "missing golden file";
  nlohmann::json golden = nlohmann::json::parse(in);
  EXPECT_EQ(actual, golden) << "info JSON changed. If on purpose, bump kInfoSchemaVersion when a "
                               "field was renamed or removed, and update the golden file.\n"
                            << actual.dump(2);
}

TEST(InfoJson, SchemaVersionIsPinned) {
  EXPECT_EQ(kInfoSchemaVersion, 1);
  EXPECT_EQ(info_to_json(sample_system())["schema_version"], 1);
}

TEST(InfoJson, AbsentReadingsAreOmittedNeverZero) {
  SystemInfo info = sample_system();
  info.gpus[0].power_draw_w.reset();
  info.gpus[0].ecc_current.reset();
  nlohmann::json j = info_to_json(info);
  const auto& gpu = j["gpus"][0];
  EXPECT_FALSE(gpu["power"].contains("draw_w"));
  EXPECT_FALSE(gpu.contains("ecc"));
  EXPECT_FALSE(gpu["temperature"].contains("memory_c"));
  EXPECT_EQ(gpu["power"]["limit_w"], 400.0);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// Recorded on the lent H100 (see tests/fixtures/info/README.md), where nvidia-smi -q in the same
// call showed: power limit 700 W (min 200, max 700), PCIe Gen5 x16, MIG disabled.
TEST(InfoJson, RecordedH100AgreesWithNvidiaSmi) {
  std::ifstream in(fixture("h100_recorded_2026-11-22.json"));
  ASSERT_TRUE(in);
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema_version"], kInfoSchemaVersion);
  ASSERT_EQ(j["gpus"].size(), 1u);
  const auto& g = j["gpus"][0];
  EXPECT_EQ(g["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g["power"]["limit_w"], 700.0);
  EXPECT_EQ(g["power"]["min_limit_w"], 200.0);
  EXPECT_EQ(g["power"]["max_limit_w"], 700.0);
  EXPECT_EQ(g["pcie"]["generation"], 5);
  EXPECT_EQ(g["pcie"]["width"], 16);
  EXPECT_EQ(g["mig"]["current"], false);
  EXPECT_EQ(g["gpm_supported"], true);
  EXPECT_EQ(g["power"]["energy_counter_supported"], true);
  EXPECT_EQ(g["sm_count"], 132);
  EXPECT_EQ(g["compute_capability"], "9.0");
  EXPECT_EQ(g["peak"]["estimated"], false);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// The one reader of the format gives back what the writer was given: writing it again is the
// same document, for the hand-made system and for the H100's recording.
TEST(InfoJsonReader, RoundTripsTheWritersOutput) {
  const nlohmann::json written = info_to_json(sample_system());
  auto read = info_from_json(written);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(info_to_json(*read), written);
  EXPECT_EQ(read->gpus[0].mig_instances[0].sm_count, 42u);
  EXPECT_EQ(read->failures[0].status.code(), Code::gpu_lost);

  std::ifstream in(fixture("h100_recorded_2026-11-22.json"));
  const nlohmann::json recorded = nlohmann::json::parse(in);
  auto h100 = info_from_json(recorded);
  ASSERT_TRUE(h100.ok()) << h100.status().to_string();
  EXPECT_EQ(info_to_json(*h100), recorded);
  EXPECT_EQ(h100->gpus[0].cc_major, 9);
}

TEST(InfoJsonReader, RefusesMalformedInputNamingTheField) {
  nlohmann::json doc = info_to_json(sample_system());
  doc["gpus"][0]["memory"]["total_bytes"] = "40 GB";
  auto read = info_from_json(doc);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.code(), Code::data_error);
  EXPECT_THAT(read.status().message(), ::testing::HasSubstr("info.gpus[0].memory.total_bytes"));

  doc = info_to_json(sample_system());
  doc["gpus"][0].erase("uuid");
  EXPECT_THAT(info_from_json(doc).status().message(), ::testing::HasSubstr("uuid: missing"));

  doc = info_to_json(sample_system());
  doc["schema_version"] = kInfoSchemaVersion + 1;
  EXPECT_THAT(info_from_json(doc).status().message(), ::testing::HasSubstr("schema_version"));

  EXPECT_EQ(info_from_json(nlohmann::json{{"kind", "gpuscope.burn"}}).code(), Code::data_error);
  EXPECT_EQ(info_from_json(nlohmann::json::array()).code(), Code::data_error);
  auto failed = info_from_json(info_error_json(Status(Code::no_driver, "no libnvidia-ml")));
  EXPECT_THAT(failed.status().message(), ::testing::HasSubstr("no libnvidia-ml"));
}

}  // namespace
}  // namespace gpuscope
