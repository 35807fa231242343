// collect_info over the fake NVML: fields, selection, partial failures, CUDA matching.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/info.h"

namespace gpuscope {
namespace {

using ::testing::HasSubstr;

CudaInventory no_cuda() {
  CudaInventory cuda;
  cuda.status = Status(Code::no_driver, "no CUDA driver");
  return cuda;
}

class CollectTest : public testing::FakeNvmlTest {
 protected:
  // collect_info() of every GPU of tests/fixtures/nvml/SCENARIO, without a CUDA driver.
  Result<SystemInfo> collected(const std::string& scenario) {
    nvml::Session* session = open_scenario(scenario);
    if (session == nullptr) return Status(Code::internal, "the fake NVML did not open");
    return collect_info(*session, no_cuda(), {});
  }
};

TEST_F(CollectTest, H100HasEveryFieldInfoPromises) {
  auto info = collected("h100_sxm.json");
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  ASSERT_EQ(info->gpus.size(), 1u);
  const GpuInfo& g = info->gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(g.pci_bus_id.has_value());
  EXPECT_EQ(g.cc_major, 9);
  EXPECT_EQ(g.power_limit_w, 700.0);
  EXPECT_EQ(g.power_min_limit_w, 200.0);
  EXPECT_EQ(g.power_max_limit_w, 700.0);
  EXPECT_EQ(g.pcie_gen_current, 5u);
  EXPECT_EQ(g.pcie_width_current, 16u);
  EXPECT_EQ(g.mig_current, false);
  EXPECT_EQ(g.gpm_supported, true);
  EXPECT_TRUE(g.energy_counter_supported);
  EXPECT_TRUE(g.temperature_slowdown_c.has_value());
  EXPECT_TRUE(g.temperature_shutdown_c.has_value());
  EXPECT_TRUE(g.clock_event_reasons.has_value());
  EXPECT_TRUE(g.unavailable.empty());
  EXPECT_FALSE(g.sm_count.has_value());  // CUDA saw nothing
  ASSERT_TRUE(g.peak.has_value());
  EXPECT_FALSE(g.peak->estimated);
  EXPECT_TRUE(g.peak->flops_per_s.count(Precision::fp8));
  EXPECT_TRUE(info->driver_version.has_value());
}

TEST_F(CollectTest, CudaDevicesAreMatchedByPciBusIdNotOrder) {
  nvml::Session* session = open_scenario("h100_sxm.json");
  ASSERT_NE(session, nullptr);
  std::string nvml_bus = session->device_by_index(0)->pci()->bus_id;  // "00000000:xx:00.0"
  CudaInventory cuda;
  cuda.devices.push_back({0, "other", "0000:ff:00.0", 8, 0, 108, 0, 0});
  cuda.devices.push_back({1, "NVIDIA H100 80GB HBM3", nvml_bus.substr(4), 9, 0, 132, 0, 50u << 20});
  auto info = collect_info(*session, cuda, {});
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->gpus[0].cuda_ordinal, 1);
  EXPECT_EQ(info->gpus[0].sm_count, 132);
  EXPECT_EQ(info->gpus[0].l2_cache_bytes, 50u << 20);
}

TEST_F(CollectTest, UnsupportedFieldsStayAbsentAndAreNotErrors) {
  auto info = collected("rtx3090.json");
  ASSERT_TRUE(info.ok());
  const GpuInfo& g = info->gpus[0];
  EXPECT_FALSE(g.ecc_current.has_value());
  EXPECT_FALSE(g.memory_temperature_c.has_value());
  EXPECT_FALSE(g.mig_current.has_value());
  EXPECT_EQ(g.gpm_supported, false);
  EXPECT_TRUE(g.unavailable.empty());
  ASSERT_TRUE(g.peak.has_value());
  EXPECT_THAT(g.peak->model, HasSubstr("3090"));
}

TEST_F(CollectTest, RefusedReadingsAreListedAndTheRestIsRead) {
  auto info = collected("permission_denied.json");
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  const GpuInfo& g = info->gpus[0];
  EXPECT_FALSE(g.power_limit_w.has_value());
  std::vector<std::string> fields;
  for (const auto& u : g.unavailable) {
    fields.push_back(u.field);
    EXPECT_THAT(u.reason, HasSubstr("permission_denied"));
  }
  EXPECT_THAT(fields, ::testing::Contains("power_limit"));
  EXPECT_THAT(fields, ::testing::Contains("ecc"));
  EXPECT_TRUE(g.temperature_c.has_value());
}

TEST_F(CollectTest, MigInstancesCarryProfilesAndUuids) {
  auto info = collected("a100_mig.json");
  ASSERT_TRUE(info.ok());
  const GpuInfo& g = info->gpus[0];
  EXPECT_EQ(g.mig_current, true);
  ASSERT_EQ(g.mig_instances.size(), 3u);
  std::vector<std::string> profiles;
  for (const auto& m : g.mig_instances) profiles.push_back(m.profile);
  EXPECT_THAT(profiles, ::testing::UnorderedElementsAre("3g.20gb", "2g.10gb", "1g.5gb"));
}

TEST_F(CollectTest, SelectorsByIndexAndUuid) {
  nvml::Session* session = open_scenario("h100_sxm.json");
  ASSERT_NE(session, nullptr);
  std::string uuid = session->device_by_index(0)->uuid().value_or("");
  EXPECT_EQ(collect_info(*session, no_cuda(), {"0"})->gpus.size(), 1u);
  EXPECT_EQ(collect_info(*session, no_cuda(), {uuid})->gpus.at(0).uuid, uuid);
  EXPECT_EQ(collect_info(*session, no_cuda(), {"1"}).code(), Code::not_found);
  EXPECT_EQ(collect_info(*session, no_cuda(), {"99999999999"}).code(), Code::not_found);
  EXPECT_EQ(collect_info(*session, no_cuda(), {"GPU-does-not-exist"}).code(), Code::not_found);
  auto bad = collect_info(*session, no_cuda(), {"first"});
  EXPECT_EQ(bad.code(), Code::invalid_argument);
  EXPECT_THAT(bad.status().message(), HasSubstr("index"));
}

TEST_F(CollectTest, AGpuLostBeforeReadingIsReportedAndOthersAreRead) {
  load("two_gpus_one_lost.json");
  gpuscope_fake_nvml_set_time(5.0);
  auto session = open();
  ASSERT_NE(session, nullptr);
  auto info = collect_info(*session, no_cuda(), {});
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  ASSERT_EQ(info->gpus.size(), 1u);
  EXPECT_EQ(info->gpus[0].index, 0u);
  ASSERT_EQ(info->failures.size(), 1u);
  EXPECT_EQ(info->failures[0].index, 1u);
  EXPECT_EQ(info->failures[0].status.code(), Code::gpu_lost);

  auto only_lost = collect_info(*session, no_cuda(), {"1"});
  EXPECT_EQ(only_lost.code(), Code::gpu_lost);
}

TEST_F(CollectTest, AGpuLostWhileBeingReadIsAFailureToo) {
  load("two_gpus_one_lost.json");
  gpuscope_fake_nvml_set_time(0.0);
  auto session = open();
  ASSERT_NE(session, nullptr);
  auto second = session->device_by_index(1);  // listed while alive...
  ASSERT_TRUE(second.ok());
  gpuscope_fake_nvml_set_time(5.0);  // ...gone before it is read
  auto info = collect_info(*session, no_cuda(), {});
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->failures.size(), 1u);
}

TEST_F(CollectTest, NoGpuIsNoDevice) {
  nvml::Session* session = open_scenario("no_gpu.json");
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(collect_info(*session, no_cuda(), {}).code(), Code::no_device);
}

TEST(MigProfile, ComesFromTheMigDeviceName) {
  EXPECT_EQ(mig_profile_from_name("NVIDIA A100-SXM4-40GB MIG 3g.20gb"), "3g.20gb");
  EXPECT_EQ(mig_profile_from_name("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me"), "1g.10gb+me");
  EXPECT_EQ(mig_profile_from_name("NVIDIA H100 80GB HBM3"), "");
}

}  // namespace
}  // namespace gpuscope
