// What the fake NVML's tests share: a fixture that resets the fake around each test and runs it
// on a manual clock, and shortcuts for loading scenarios and getting handles.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nvml.h>

#include "fake_nvml_control.h"

namespace gpuscope::fake_nvml {

inline std::string fixture_path(std::string_view name) {
  return std::string(GPUSCOPE_NVML_FIXTURES) + "/" + std::string(name);
}

class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("GPUSCOPE_FAKE_NVML_SCENARIO");
    gpuscope_fake_nvml_reset();
    gpuscope_fake_nvml_set_time(0.0);
  }

  void TearDown() override {
    unsetenv("GPUSCOPE_FAKE_NVML_SCENARIO");
    gpuscope_fake_nvml_reset();
  }

  // Loads tests/fixtures/nvml/<name> and initializes NVML.
  void start_fixture(std::string_view name) {
    ASSERT_EQ(gpuscope_fake_nvml_load_scenario_file(fixture_path(name).c_str()), 0)
        << gpuscope_fake_nvml_last_error();
    ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  }

  // Loads an inline scenario and initializes NVML.
  void start_scenario(const char* json) {
    ASSERT_EQ(gpuscope_fake_nvml_load_scenario(json), 0) << gpuscope_fake_nvml_last_error();
    ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  }

  static nvmlDevice_t handle(unsigned index) {
    nvmlDevice_t device = nullptr;
    EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(index, &device), NVML_SUCCESS);
    return device;
  }

  static void at(double seconds) { gpuscope_fake_nvml_set_time(seconds); }
};

}  // namespace gpuscope::fake_nvml
