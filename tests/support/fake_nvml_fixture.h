// Test fixture: a clean fake NVML (tests/fakes/nvml) per test, and a Session opened on it
// through the adapter's normal loading path.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "../fakes/nvml/fake_nvml_control.h"
#include "gpuscope/nvml.h"

namespace gpuscope::testing {

inline std::string nvml_fixture(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURES) + "/nvml/" + name;
}

class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override { gpuscope_fake_nvml_reset(); }
  void TearDown() override {
    session_.reset();
    gpuscope_fake_nvml_reset();
  }

  // Loads tests/fixtures/nvml/NAME into the fake.
  void load(const std::string& name) {
    ASSERT_EQ(0, gpuscope_fake_nvml_load_scenario_file(nvml_fixture(name).c_str()))
        << gpuscope_fake_nvml_last_error();
  }
  void load_json(const std::string& json) {
    ASSERT_EQ(0, gpuscope_fake_nvml_load_scenario(json.c_str())) << gpuscope_fake_nvml_last_error();
  }

  // Opens a Session on the fake; fails the test if that does not work.
  std::unique_ptr<nvml::Session> open() {
    auto session = nvml::Session::open({{GPUSCOPE_FAKE_NVML_PATH}});
    EXPECT_TRUE(session.ok()) << session.status().to_string();
    return session.ok() ? std::move(session).value() : nullptr;
  }

  // Loads tests/fixtures/nvml/NAME and opens a Session on it, which the fixture keeps until the
  // test ends; nullptr, with the test failed, where either does not work.
  nvml::Session* open_scenario(const std::string& name) {
    load(name);
    if (::testing::Test::HasFatalFailure()) return nullptr;
    session_ = open();
    return session_.get();
  }

  // GPU 0 of tests/fixtures/nvml/NAME, on a Session as open_scenario() opens it; nullopt, with
  // the test failed, where it cannot be had.
  std::optional<nvml::Device> first_gpu(const std::string& name) {
    nvml::Session* session = open_scenario(name);
    if (session == nullptr) return std::nullopt;
    auto device = session->device_by_index(0);
    EXPECT_TRUE(device.ok()) << device.status().to_string();
    if (!device.ok()) return std::nullopt;
    return std::move(device).value();
  }

 private:
  std::unique_ptr<nvml::Session> session_;
};

}  // namespace gpuscope::testing
