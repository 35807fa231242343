// The adapter's setters, which only the sweep calls: the power limit and the SM clock lock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/nvml.h"

namespace gpuscope::nvml {
namespace {

using ::testing::HasSubstr;
using PowerLimitTest = gpuscope::testing::FakeNvmlTest;

TEST_F(PowerLimitTest, SetsTheLimitInWholeMilliwattsAndTheEnforcedLimitFollows) {
  auto device = first_gpu("rtx3090.json");
  ASSERT_TRUE(device);
  ASSERT_TRUE(device->set_power_limit_w(330.0004).ok());
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 330000u);
  EXPECT_DOUBLE_EQ(device->power_limit_w().value_or(0), 330.0);
  EXPECT_DOUBLE_EQ(device->enforced_power_limit_w().value_or(0), 330.0);
}

TEST_F(PowerLimitTest, RefusalsKeepTheirKind) {
  load_json(R"({"devices": [
      {"name": "Capped", "uuid": "GPU-1", "power_limit_mw": 300000,
       "min_power_limit_mw": 100000, "max_power_limit_mw": 400000},
      {"name": "Fixed", "uuid": "GPU-2", "power_limit_mw": 300000}],
    "errors": [{"function": "nvmlDeviceSetPowerManagementLimit", "device": 0,
                "from_t": 100, "return": "NVML_ERROR_NO_PERMISSION"}]})");
  gpuscope_fake_nvml_set_time(0);
  auto session = open();
  ASSERT_NE(session, nullptr);
  auto capped = session->device_by_index(0);
  auto fixed = session->device_by_index(1);
  ASSERT_TRUE(capped.ok() && fixed.ok());
  EXPECT_EQ(capped->set_power_limit_w(50).code(), Code::invalid_argument);
  EXPECT_EQ(capped->set_power_limit_w(-1).code(), Code::invalid_argument);
  EXPECT_EQ(fixed->set_power_limit_w(250).code(), Code::not_supported);
  gpuscope_fake_nvml_set_time(100);
  const Status refused = capped->set_power_limit_w(250);
  EXPECT_EQ(refused.code(), Code::permission_denied);
  // The call is named where it failed (the detail --verbose prints), not in the sentence.
  EXPECT_THAT(refused.detail(), HasSubstr("nvmlDeviceSetPowerManagementLimit"));
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 0u);
}

TEST_F(PowerLimitTest, LocksTheSmClockFromTheSupportedListAndResetsIt) {
  auto device = first_gpu("rtx3090_power_sweep.json");
  ASSERT_TRUE(device);
  auto clocks = device->supported_sm_clocks_mhz();
  ASSERT_TRUE(clocks.ok()) << clocks.status().to_string();
  ASSERT_EQ(clocks->size(), 127u);  // 2100 down to 210 MHz in 15 MHz steps
  EXPECT_EQ(clocks->front(), 2100u);
  EXPECT_EQ(clocks->back(), 210u);
  EXPECT_EQ(device->set_locked_sm_clocks_mhz(1500, 1400).code(), Code::invalid_argument);
  ASSERT_TRUE(device->set_locked_sm_clocks_mhz(1410, 1410).ok());
  unsigned low = 0, high = 0;
  ASSERT_EQ(gpuscope_fake_nvml_locked_clocks_mhz(0, &low, &high), 1);
  EXPECT_EQ(low, 1410u);
  EXPECT_EQ(high, 1410u);
  ASSERT_TRUE(device->reset_locked_sm_clocks().ok());
  EXPECT_EQ(gpuscope_fake_nvml_locked_clocks_mhz(0, &low, &high), 0);
}

TEST_F(PowerLimitTest, ClockLockRefusalsKeepTheirKind) {
  load_json(R"({"devices": [
      {"name": "Lockable", "uuid": "GPU-1", "max_clocks": {"graphics_mhz": 1980, "mem_mhz": 2619}},
      {"name": "Old", "uuid": "GPU-2", "max_clocks": {"sm_mhz": 1380}}],
    "errors": [{"function": "nvmlDeviceSetGpuLockedClocks", "device": 0,
                "return": "NVML_ERROR_NO_PERMISSION"}]})");
  auto session = open();
  ASSERT_NE(session, nullptr);
  auto lockable = session->device_by_index(0);
  auto old = session->device_by_index(1);
  ASSERT_TRUE(lockable.ok() && old.ok());
  const Status refused = lockable->set_locked_sm_clocks_mhz(1410, 1410);
  EXPECT_EQ(refused.code(), Code::permission_denied);
  EXPECT_THAT(refused.detail(), HasSubstr("nvmlDeviceSetGpuLockedClocks"));
  EXPECT_EQ(old->supported_sm_clocks_mhz().code(), Code::not_supported);
  EXPECT_EQ(old->set_locked_sm_clocks_mhz(1000, 1000).code(), Code::not_supported);
  EXPECT_EQ(old->reset_locked_sm_clocks().code(), Code::not_supported);
}

}  // namespace
}  // namespace gpuscope::nvml
