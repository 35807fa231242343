// The adapter's one setter: the power limit the sweep changes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/nvml.h"

namespace gpuscope::nvml {
namespace {

using ::testing::HasSubstr;
using PowerLimitTest = gpuscope::testing::FakeNvmlTest;

TEST_F(PowerLimitTest, SetsTheLimitInWholeMilliwattsAndTheEnforcedLimitFollows) {
  load("rtx3090.json");
  auto session = open();
  ASSERT_NE(session, nullptr);
  auto device = session->device_by_index(0);
  ASSERT_TRUE(device.ok());
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

}  // namespace
}  // namespace gpuscope::nvml
