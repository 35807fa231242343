// list_targets() on the fake NVML: whole GPUs, MIG instances after their GPU, a lost GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/target.h"

namespace gpuscope {
namespace {

using ::testing::HasSubstr;

class Targets : public testing::FakeNvmlTest {};

TEST_F(Targets, AGpuInMigModeIsFollowedByItsInstances) {
  load("a100_mig.json");
  auto session = open();
  auto targets = list_targets(*session);
  ASSERT_TRUE(targets.ok()) << targets.status().to_string();
  ASSERT_EQ(targets->size(), 4u);
  const Target& gpu = (*targets)[0];
  EXPECT_FALSE(gpu.is_mig());
  EXPECT_TRUE(gpu.mig_mode);
  EXPECT_EQ(gpu.uuid(), "GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d");
  EXPECT_EQ(gpu.pci_bus_id, "00000000:07:00.0");
  const Target& slice = (*targets)[1];
  ASSERT_TRUE(slice.is_mig());
  EXPECT_EQ(slice.gpu_index, 0u);
  EXPECT_EQ(slice.gpu_uuid, gpu.gpu_uuid);
  EXPECT_EQ(slice.uuid(), "MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9");
  EXPECT_EQ(slice.name, "NVIDIA A100-SXM4-40GB MIG 3g.20gb");
  EXPECT_EQ(slice.gpu_name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(slice.mig->profile, "3g.20gb");
  EXPECT_EQ(slice.mig->gpu_instance_id, 1u);
  EXPECT_EQ(slice.sm_count, 42u);
  EXPECT_EQ(slice.memory_total_bytes, 20937965568u);
  EXPECT_EQ(slice.label(), "GPU 0 MIG 3g.20gb (GI 1 CI 0)");
}

TEST_F(Targets, AWholeGpuHasItsOwnNameAndMemory) {
  load("h100_sxm.json");
  auto session = open();
  auto targets = list_targets(*session);
  ASSERT_TRUE(targets.ok());
  ASSERT_EQ(targets->size(), 1u);
  EXPECT_FALSE((*targets)[0].mig_mode);
  EXPECT_EQ((*targets)[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE((*targets)[0].memory_total_bytes);
}

TEST_F(Targets, ALostGpuIsListedUnavailable) {
  load("two_gpus_one_lost.json");
  auto session = open();
  gpuscope_fake_nvml_set_time(2.0);
  auto targets = list_targets(*session);
  ASSERT_TRUE(targets.ok()) << targets.status().to_string();
  ASSERT_EQ(targets->size(), 2u);
  EXPECT_TRUE((*targets)[0].unavailable.ok());
  EXPECT_EQ((*targets)[1].unavailable.code(), Code::gpu_lost);
  EXPECT_EQ((*targets)[1].gpu_index, 1u);
}

TEST_F(Targets, NoGpuIsNoDevice) {
  nvml::Session* session = open_scenario("no_gpu.json");
  ASSERT_NE(session, nullptr);
  auto targets = list_targets(*session);
  EXPECT_EQ(targets.code(), Code::no_device);
  EXPECT_THAT(targets.status().message(), HasSubstr("lists no GPU"));
}

}  // namespace
}  // namespace gpuscope
