// MIG enumeration through the adapter (no MIG hardware is available to test on).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/nvml.h"

namespace gpuscope::nvml {
namespace {

using ::testing::StartsWith;
using MigTest = gpuscope::testing::FakeNvmlTest;

TEST_F(MigTest, ListsEveryComputeInstanceWithItsUuidAndSize) {
  auto device = first_gpu("a100_mig.json");
  ASSERT_TRUE(device);
  auto mode = device->mig_mode();
  ASSERT_TRUE(mode.ok());
  EXPECT_TRUE(mode->current);

  auto migs = device->mig_devices();
  ASSERT_TRUE(migs.ok()) << migs.status().to_string();
  ASSERT_EQ(migs->size(), 3u);
  std::vector<unsigned> sms, gis;
  for (const MigDevice& m : *migs) {
    EXPECT_THAT(m.uuid, StartsWith("MIG-"));
    EXPECT_THAT(m.name, StartsWith("NVIDIA A100-SXM4-40GB MIG "));
    ASSERT_TRUE(m.sm_count.has_value());
    ASSERT_TRUE(m.memory_total_bytes.has_value());
    sms.push_back(*m.sm_count);
    gis.push_back(m.gpu_instance_id);
  }
  EXPECT_THAT(sms, ::testing::UnorderedElementsAre(42u, 28u, 14u));
  EXPECT_THAT(gis, ::testing::UnorderedElementsAre(1u, 5u, 13u));
}

}  // namespace
}  // namespace gpuscope::nvml
