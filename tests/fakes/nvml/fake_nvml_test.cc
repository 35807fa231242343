// The fake NVML's life cycle, scenario loading, scripted failures and exported symbols.
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_nvml_test_util.h"

namespace gpuscope::fake_nvml {
namespace {

using ::testing::HasSubstr;

TEST_F(FakeNvmlTest, EverythingIsUninitializedBeforeInit) {
  ASSERT_EQ(gpuscope_fake_nvml_load_scenario_file(fixture_path("h100_sxm.json").c_str()), 0);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  nvmlDevice_t device = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(0, &device), NVML_ERROR_UNINITIALIZED);
  char version[80];
  EXPECT_EQ(nvmlSystemGetDriverVersion(version, sizeof version), NVML_ERROR_UNINITIALIZED);
  nvmlGpmSample_t sample = nullptr;
  EXPECT_EQ(nvmlGpmSampleAlloc(&sample), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(gpuscope_fake_nvml_shutdown_count(), 0u);
}

TEST_F(FakeNvmlTest, InitIsReferenceCounted) {
  start_fixture("h100_sxm.json");
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  EXPECT_EQ(gpuscope_fake_nvml_init_count(), 2u);

  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS) << "one reference is still held";
  EXPECT_EQ(count, 1u);

  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(gpuscope_fake_nvml_shutdown_count(), 2u) << "a failed shutdown releases nothing";

  // A handle taken before works again after a re-init: the scenario is kept.
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
}

TEST_F(FakeNvmlTest, WithoutScenarioIsADriverWithNoGpu) {
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  unsigned count = 99;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
  char version[80] = {};
  ASSERT_EQ(nvmlSystemGetDriverVersion(version, sizeof version), NVML_SUCCESS);
  EXPECT_STRNE(version, "");
  nvmlDevice_t device = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(0, &device), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvmlTest, ScenarioComesFromTheEnvironmentAtInit) {
  setenv("GPUSCOPE_FAKE_NVML_SCENARIO", fixture_path("rtx3090.json").c_str(), 1);
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  char name[96] = {};
  ASSERT_EQ(nvmlDeviceGetName(handle(0), name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA GeForce RTX 3090");
}

TEST_F(FakeNvmlTest, ScenarioLoadedByTheTestWinsOverTheEnvironment) {
  setenv("GPUSCOPE_FAKE_NVML_SCENARIO", fixture_path("rtx3090.json").c_str(), 1);
  start_fixture("a100_mig.json");
  char name[96] = {};
  ASSERT_EQ(nvmlDeviceGetName(handle(0), name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA A100-SXM4-40GB");
}

TEST_F(FakeNvmlTest, BrokenEnvironmentScenarioFailsInitLoudly) {
  setenv("GPUSCOPE_FAKE_NVML_SCENARIO", "/nonexistent/scenario.json", 1);
  EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  EXPECT_THAT(gpuscope_fake_nvml_last_error(), HasSubstr("/nonexistent/scenario.json"));
  EXPECT_EQ(gpuscope_fake_nvml_init_count(), 0u);
}

TEST_F(FakeNvmlTest, NoDriverFailsInitAndStaysUninitialized) {
  ASSERT_EQ(gpuscope_fake_nvml_load_scenario_file(fixture_path("no_driver.json").c_str()), 0);
  EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_DRIVER_NOT_LOADED), "Driver Not Loaded");
  EXPECT_EQ(gpuscope_fake_nvml_init_count(), 0u);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

TEST_F(FakeNvmlTest, NoGpuFixtureHasADriverAndNoDevice) {
  start_fixture("no_gpu.json");
  unsigned count = 99;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
  int cuda = 0;
  ASSERT_EQ(nvmlSystemGetCudaDriverVersion_v2(&cuda), NVML_SUCCESS);
  EXPECT_EQ(cuda, 13000);
}

TEST_F(FakeNvmlTest, ErrorStringsUseNvmlsWording) {
  EXPECT_STREQ(nvmlErrorString(NVML_SUCCESS), "Success");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_INVALID_ARGUMENT), "Invalid Argument");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_NO_PERMISSION), "Insufficient Permissions");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_NOT_FOUND), "Not Found");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_UNKNOWN), "Unknown Error");
  EXPECT_STREQ(nvmlErrorString(static_cast<nvmlReturn_t>(998)), "Unknown Error");
}

TEST_F(FakeNvmlTest, SystemQueriesReportTheScenario) {
  start_fixture("h100_sxm.json");
  char version[80] = {};
  ASSERT_EQ(nvmlSystemGetDriverVersion(version, sizeof version), NVML_SUCCESS);
  EXPECT_STREQ(version, "580.95.05");
  ASSERT_EQ(nvmlSystemGetNVMLVersion(version, sizeof version), NVML_SUCCESS);
  EXPECT_STREQ(version, "13.580.95.05");
  EXPECT_EQ(nvmlSystemGetDriverVersion(version, 5), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(nvmlSystemGetCudaDriverVersion_v2(nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

struct BadScenario {
  const char* json;
  const char* message;  // a part of the error that must be there
};

TEST_F(FakeNvmlTest, BadScenariosAreRejectedWithThePathOfTheProblem) {
  const std::array cases = {
      BadScenario{"{", "not valid JSON"},
      BadScenario{R"({"devices": [{"name": "x", "power_limt_mw": 1}]})",
                  "devices[0].power_limt_mw: unknown key"},
      BadScenario{R"({"devices": [{"uuid": "GPU-1"}]})", "devices[0].name: required"},
      BadScenario{R"({"devices": [{"name": "x", "timeline": [{"t": 1}, {"t": 0.5}]}]})",
                  "devices[0].timeline[1].t"},
      BadScenario{R"({"devices": [{"name": "x", "timeline": [{"t": 0, "powr_mw": 1}]}]})",
                  "devices[0].timeline[0].powr_mw: unknown reading"},
      BadScenario{R"({"devices": [{"name": "x", "timeline": [{"t": 0, "gpm": {"tensor": 1}}]}]})",
                  "devices[0].timeline[0].gpm.tensor"},
      BadScenario{R"({"devices": [{"name": "x", "memory_total_bytes": -1}]})",
                  "devices[0].memory_total_bytes: expected a non-negative integer"},
      BadScenario{
          R"({"errors": [{"function": "nvmlDeviceGetPower", "return": "NVML_ERROR_UNKNOWN"}]})",
          "errors[0].function"},
      BadScenario{R"({"errors": [{"function": "nvmlDeviceGetPowerUsage", "return": "EPERM"}]})",
                  "errors[0].return: unknown nvmlReturn_t name 'EPERM'"},
      BadScenario{R"({"errors": [{"function": "nvmlDeviceGetPowerUsage", "device": 0,
                                  "return": "NVML_ERROR_UNKNOWN"}]})",
                  "errors[0].device: no such device"},
      BadScenario{R"({"devices": [{"name": "x", "unsupported": ["nvmlDeviceGetPowr"]}]})",
                  "devices[0].unsupported[0]"},
      BadScenario{
          R"({"devices": [{"name": "a", "uuid": "GPU-1"}, {"name": "b", "uuid": "GPU-1"}]})",
          "duplicate uuid GPU-1"},
      BadScenario{R"({"devices": [{"name": "x", "mig": {"current": false, "instances": [
                     {"gpu_instance_id": 1, "compute_instance_id": 0, "name": "m",
                      "memory_total_bytes": 1, "sm_count": 1}]}}]})",
                  "MIG mode is off"},
  };
  for (const BadScenario& bad : cases) {
    EXPECT_NE(gpuscope_fake_nvml_load_scenario(bad.json), 0) << bad.json;
    EXPECT_THAT(gpuscope_fake_nvml_last_error(), HasSubstr(bad.message)) << bad.json;
  }
}

TEST_F(FakeNvmlTest, FailedLoadKeepsThePreviousScenario) {
  start_fixture("rtx3090.json");
  ASSERT_NE(gpuscope_fake_nvml_load_scenario("{\"devices\": 3}"), 0);
  char name[96] = {};
  ASSERT_EQ(nvmlDeviceGetName(handle(0), name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA GeForce RTX 3090");
}

// Every fixture loads and says where its numbers come from; the scripted ones say so.
TEST_F(FakeNvmlTest, EveryFixtureLoadsAndDescribesItself) {
  const std::set<std::string> scripted = {
      "a100_mig.json", "h100_sxm.json",          "no_driver.json",         "no_gpu.json",
      "rtx3090.json",  "permission_denied.json", "two_gpus_one_lost.json",
  };
  std::set<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(GPUSCOPE_NVML_FIXTURES)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    seen.insert(name);
    EXPECT_EQ(gpuscope_fake_nvml_load_scenario_file(entry.path().c_str()), 0)
        << name << ": " << gpuscope_fake_nvml_last_error();
    std::ifstream file(entry.path());
    const nlohmann::json json = nlohmann::json::parse(file);
    const std::string description = json.value("description", "");
    EXPECT_GE(description.size(), 20u) << name;
    if (scripted.contains(name)) {
      EXPECT_THAT(description, ::testing::StartsWith("Scripted, not recorded")) << name;
    }
  }
  for (const std::string& name : scripted) EXPECT_TRUE(seen.contains(name)) << name;
}

TEST_F(FakeNvmlTest, CountsCallsByFunctionName) {
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  start_fixture("h100_sxm.json");
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  unsigned power = 0;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(handle(0), &power), NVML_SUCCESS);
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlDeviceGetCount_v2"), 2);
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlDeviceGetPowerUsage"), 1);
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlInit_v2"), 1);
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlDeviceGetTotalEnergyConsumption"), 0);
  EXPECT_EQ(gpuscope_fake_nvml_call_count("noSuchFunction"), 0);
  gpuscope_fake_nvml_reset();
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlDeviceGetCount_v2"), 0);
}

TEST_F(FakeNvmlTest, ScriptedErrorsHoldFromTheirStartUntilTheirEnd) {
  start_scenario(R"({
    "devices": [{"name": "GPU A", "timeline": [{"t": 0, "power_mw": 100000}]},
                {"name": "GPU B", "timeline": [{"t": 0, "power_mw": 200000}]}],
    "errors": [
      {"function": "nvmlDeviceGetPowerUsage", "device": 0, "from_t": 1.0, "until_t": 2.0,
       "return": "NVML_ERROR_NO_PERMISSION"},
      {"function": "nvmlSystemGetDriverVersion", "from_t": 3.0, "return": "NVML_ERROR_UNKNOWN"}
    ]})");
  unsigned power = 0;
  at(0.5);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(handle(0), &power), NVML_SUCCESS);
  EXPECT_EQ(power, 100000u);
  at(1.0);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(handle(0), &power), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(handle(1), &power), NVML_SUCCESS) << "other device";
  EXPECT_EQ(power, 200000u);
  at(1.999);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(handle(0), &power), NVML_ERROR_NO_PERMISSION);
  at(2.0);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(handle(0), &power), NVML_SUCCESS) << "until_t is exclusive";

  char version[80];
  at(2.9);
  EXPECT_EQ(nvmlSystemGetDriverVersion(version, sizeof version), NVML_SUCCESS);
  at(1000.0);
  EXPECT_EQ(nvmlSystemGetDriverVersion(version, sizeof version), NVML_ERROR_UNKNOWN)
      << "no until_t: for ever";
}

TEST_F(FakeNvmlTest, PermissionDeniedFixtureDeniesLimitsAndEccOnly) {
  start_fixture("permission_denied.json");
  const nvmlDevice_t device = handle(0);
  unsigned value = 0, other = 0;
  EXPECT_EQ(nvmlDeviceGetPowerManagementLimit(device, &value), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceGetPowerManagementDefaultLimit(device, &value), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceGetPowerManagementLimitConstraints(device, &value, &other),
            NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceGetEnforcedPowerLimit(device, &value), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 300000), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 0u);
  nvmlEnableState_t current, pending;
  EXPECT_EQ(nvmlDeviceGetEccMode(device, &current, &pending), NVML_ERROR_NO_PERMISSION);
  unsigned long long errors = 0;
  EXPECT_EQ(nvmlDeviceGetTotalEccErrors(device, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                        NVML_VOLATILE_ECC, &errors),
            NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 69000u);
}

TEST_F(FakeNvmlTest, UnsupportedFunctionsReturnNotSupported) {
  start_fixture("a100_mig.json");
  nvmlUtilization_t utilization;
  EXPECT_EQ(nvmlDeviceGetUtilizationRates(handle(0), &utilization), NVML_ERROR_NOT_SUPPORTED);
  unsigned temperature = 0;
  EXPECT_EQ(nvmlDeviceGetTemperature(handle(0), NVML_TEMPERATURE_GPU, &temperature), NVML_SUCCESS);
  EXPECT_EQ(temperature, 29u);
}

TEST_F(FakeNvmlTest, LostGpuFailsEveryCallFromItsTime) {
  start_fixture("two_gpus_one_lost.json");
  at(0.75);
  const nvmlDevice_t first = handle(0);
  const nvmlDevice_t second = handle(1);
  unsigned power = 0;
  ASSERT_EQ(nvmlDeviceGetPowerUsage(second, &power), NVML_SUCCESS);
  EXPECT_EQ(power, 605000u);

  at(1.0);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(second, &power), NVML_ERROR_GPU_IS_LOST);
  char name[96];
  EXPECT_EQ(nvmlDeviceGetName(second, name, sizeof name), NVML_ERROR_GPU_IS_LOST);
  nvmlDevice_t again = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(1, &again), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(nvmlDeviceGetHandleByUUID("GPU-5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", &again),
            NVML_ERROR_GPU_IS_LOST);
  nvmlGpmSample_t sample = nullptr;
  ASSERT_EQ(nvmlGpmSampleAlloc(&sample), NVML_SUCCESS);
  EXPECT_EQ(nvmlGpmSampleGet(second, sample), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(nvmlGpmSampleFree(sample), NVML_SUCCESS);

  unsigned count = 0;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 2u) << "a lost GPU is still counted";
  EXPECT_EQ(nvmlDeviceGetPowerUsage(first, &power), NVML_SUCCESS);
  EXPECT_EQ(power, 610000u);
}

TEST_F(FakeNvmlTest, RealClockStartsAtInit) {
  gpuscope_fake_nvml_reset();  // back to the real clock
  start_scenario(R"({"devices": [{"name": "x", "timeline": [
                      {"t": 0, "power_mw": 1000}, {"t": 1000, "power_mw": 2000}]}]})");
  unsigned power = 0;
  ASSERT_EQ(nvmlDeviceGetPowerUsage(handle(0), &power), NVML_SUCCESS);
  EXPECT_EQ(power, 1000u);
  gpuscope_fake_nvml_set_time(1000.0);
  ASSERT_EQ(nvmlDeviceGetPowerUsage(handle(0), &power), NVML_SUCCESS);
  EXPECT_EQ(power, 2000u);
}

TEST_F(FakeNvmlTest, ConcurrentCallersAreSerialized) {
  start_fixture("h100_sxm.json");
  const nvmlDevice_t device = handle(0);
  constexpr int kCallsPerThread = 2000;
  std::atomic<int> failures{0};
  auto reader = [&] {
    for (int i = 0; i < kCallsPerThread; ++i) {
      unsigned power = 0;
      if (nvmlDeviceGetPowerUsage(device, &power) != NVML_SUCCESS) ++failures;
    }
  };
  std::thread a(reader), b(reader);
  for (int i = 0; i < kCallsPerThread; ++i) gpuscope_fake_nvml_set_time(i * 0.001);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlDeviceGetPowerUsage"), 2 * kCallsPerThread);
}

// The table of entry points the adapter resolves, each by the first name of its entry.
#define GPUSCOPE_NVML_REQUIRED(name, ...) #name,
#define GPUSCOPE_NVML_OPTIONAL(name, ...) #name,
constexpr std::array kTableNames = {
#include "nvml/nvml_symbols.inc"
};
#undef GPUSCOPE_NVML_REQUIRED
#undef GPUSCOPE_NVML_OPTIONAL

TEST(FakeNvmlExports, EverySymbolOfTheAdaptersTableIsExported) {
  void* library = dlopen(GPUSCOPE_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  for (const char* name : kTableNames) {
    EXPECT_NE(dlsym(library, name), nullptr) << name;
  }
  // The same instance the test links: the adapter's dlopen sees what the test scripts.
  EXPECT_EQ(dlsym(library, "nvmlInit_v2"), reinterpret_cast<void*>(&nvmlInit_v2));
  // A new driver: the old names the adapter falls back to are not there.
  EXPECT_EQ(dlsym(library, "nvmlInit"), nullptr);
  EXPECT_EQ(dlsym(library, "nvmlDeviceGetCurrentClocksThrottleReasons"), nullptr);
  EXPECT_NE(dlsym(library, "gpuscope_fake_nvml_load_scenario"), nullptr);
  dlclose(library);
}

TEST(FakeNvmlExports, OldDriverHasOnlyTheOldNames) {
  void* library = dlopen(GPUSCOPE_FAKE_NVML_OLD_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_NE(library, nullptr) << dlerror();
  for (const char* missing :
       {"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
        "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetPowerUsage",
        "gpuscope_fake_nvml_reset"}) {
    EXPECT_EQ(dlsym(library, missing), nullptr) << missing;
  }
  const auto init = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(library, "nvmlInit"));
  const auto shutdown = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(library, "nvmlShutdown"));
  const auto get_count =
      reinterpret_cast<nvmlReturn_t (*)(unsigned*)>(dlsym(library, "nvmlDeviceGetCount"));
  const auto get_handle = reinterpret_cast<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(
      dlsym(library, "nvmlDeviceGetHandleByIndex"));
  const auto get_name = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned)>(
      dlsym(library, "nvmlDeviceGetName"));
  const auto get_reasons = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>(
      dlsym(library, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  ASSERT_TRUE(init && shutdown && get_count && get_handle && get_name && get_reasons);
  ASSERT_NE(dlsym(library, "nvmlDeviceGetUUID"), nullptr);
  ASSERT_NE(dlsym(library, "nvmlErrorString"), nullptr);

  unsigned count = 0;
  EXPECT_EQ(get_count(&count), NVML_ERROR_UNINITIALIZED);
  ASSERT_EQ(init(), NVML_SUCCESS);
  ASSERT_EQ(get_count(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 1u);
  nvmlDevice_t device = nullptr;
  ASSERT_EQ(get_handle(0, &device), NVML_SUCCESS);
  char name[96] = {};
  ASSERT_EQ(get_name(device, name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "Fake Old Driver GPU");
  unsigned long long reasons = 0;
  ASSERT_EQ(get_reasons(device, &reasons), NVML_SUCCESS);
  EXPECT_EQ(reasons, 0x4ull);
  EXPECT_EQ(shutdown(), NVML_SUCCESS);
  dlclose(library);
}

}  // namespace
}  // namespace gpuscope::fake_nvml
