// Loading NVML: candidates in order, old drivers' symbol names, unusable libraries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/nvml.h"
#include "support/matchers.h"

namespace gpuscope::nvml {
namespace {

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;
using LibraryTest = gpuscope::testing::FakeNvmlTest;

TEST_F(LibraryTest, NoLibraryIsNoDriverAndNamesWhatWasTried) {
  auto session = Session::open({{"/nonexistent/libnvidia-ml.so.1", "libnvidia-ml-missing.so"}});
  EXPECT_EQ(session.code(), Code::no_driver);
  EXPECT_THAT(session.status().message(),
              HasAllSubstrs({"no NVIDIA driver found", "/nonexistent/libnvidia-ml.so.1",
                             "libnvidia-ml-missing.so"}));
}

TEST_F(LibraryTest, TriesCandidatesInOrder) {
  load("h100_sxm.json");
  auto session = Session::open({{"/nonexistent/libnvidia-ml.so.1", GPUSCOPE_FAKE_NVML_PATH}});
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  EXPECT_EQ((*session)->library_path(), GPUSCOPE_FAKE_NVML_PATH);
}

TEST_F(LibraryTest, EnvironmentOverrideSelectsTheLibrary) {
  load("h100_sxm.json");
  setenv("GPUSCOPE_NVML_LIBRARY", GPUSCOPE_FAKE_NVML_PATH, 1);
  auto session = Session::open();
  unsetenv("GPUSCOPE_NVML_LIBRARY");
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  EXPECT_EQ((*session)->library_path(), GPUSCOPE_FAKE_NVML_PATH);
}

TEST_F(LibraryTest, NewestVersionedSymbolIsBoundFirst) {
  nvml::Session* session = open_scenario("h100_sxm.json");
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->bound_symbol("nvmlInit_v2"), "nvmlInit_v2");
  EXPECT_EQ(session->bound_symbol("nvmlDeviceGetCount_v2"), "nvmlDeviceGetCount_v2");
  EXPECT_EQ(session->bound_symbol("nvmlDeviceGetCurrentClocksEventReasons"),
            "nvmlDeviceGetCurrentClocksEventReasons");
}

TEST(OldDriver, FallsBackToOlderSymbolsAndMissingOnesReadAsUnsupported) {
  auto session = Session::open({{GPUSCOPE_FAKE_NVML_OLD_DRIVER_PATH}});
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  EXPECT_EQ((*session)->bound_symbol("nvmlInit_v2"), "nvmlInit");
  EXPECT_EQ((*session)->bound_symbol("nvmlDeviceGetCount_v2"), "nvmlDeviceGetCount");
  EXPECT_EQ((*session)->bound_symbol("nvmlDeviceGetCurrentClocksEventReasons"),
            "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_EQ((*session)->bound_symbol("nvmlDeviceGetPowerUsage"), "");

  auto device = (*session)->device_by_index(0);
  ASSERT_TRUE(device.ok()) << device.status().to_string();
  EXPECT_EQ(device->name().value_or(""), "Fake Old Driver GPU");
  EXPECT_EQ(device->clock_event_reasons().value_or(0), 0x4u);
  auto power = device->power_w();
  EXPECT_EQ(power.code(), Code::not_supported);
  EXPECT_THAT(power.status().message(), HasSubstr("not exported"));
  EXPECT_EQ((*session)->driver_version().code(), Code::not_supported);
}

TEST(UnusableLibrary, ALibraryWithoutNvmlIsRejectedClearly) {
  auto session = Session::open({{"libc.so.6"}});
  EXPECT_EQ(session.code(), Code::internal);
  EXPECT_THAT(session.status().message(), HasSubstr("not a usable NVML library"));
  EXPECT_THAT(session.status().message(), HasSubstr("nvmlInit_v2"));
}

}  // namespace
}  // namespace gpuscope::nvml
