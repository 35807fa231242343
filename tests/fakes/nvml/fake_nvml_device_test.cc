// The fake's device queries: static facts, the step timeline, energy, field values, power
// limits and processes, checked against the fixtures and against hand computations.
#include <unistd.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "fake_nvml_test_util.h"

namespace gpuscope::fake_nvml {
namespace {

// h100_sxm.json's energy counter before t = 0.
constexpr unsigned long long kH100EnergyOffsetMj = 48213097000ULL;

TEST_F(FakeNvmlTest, H100StaticFacts) {
  start_fixture("h100_sxm.json");
  const nvmlDevice_t device = handle(0);
  char text[96] = {};
  ASSERT_EQ(nvmlDeviceGetName(device, text, sizeof text), NVML_SUCCESS);
  EXPECT_STREQ(text, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(nvmlDeviceGetUUID(device, text, sizeof text), NVML_SUCCESS);
  EXPECT_STREQ(text, "GPU-3f6b2c1d-8a4e-4f1b-9c2d-5e7a8b9c0d1e");

  nvmlPciInfo_t pci;
  ASSERT_EQ(nvmlDeviceGetPciInfo_v3(device, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:18:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0000:18:00.0");
  EXPECT_EQ(pci.bus, 0x18u);
  EXPECT_EQ(pci.pciDeviceId, 0x233010DEu);

  int major = 0, minor = -1;
  ASSERT_EQ(nvmlDeviceGetCudaComputeCapability(device, &major, &minor), NVML_SUCCESS);
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  unsigned value = 0;
  ASSERT_EQ(nvmlDeviceGetMemoryBusWidth(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 5120u);
  ASSERT_EQ(nvmlDeviceGetMaxClockInfo(device, NVML_CLOCK_SM, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 1980u);
  ASSERT_EQ(nvmlDeviceGetMaxClockInfo(device, NVML_CLOCK_MEM, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 2619u);
  ASSERT_EQ(nvmlDeviceGetTemperatureThreshold(device, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &value),
            NVML_SUCCESS);
  EXPECT_EQ(value, 90u);
  EXPECT_EQ(
      nvmlDeviceGetTemperatureThreshold(device, NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN, &value),
      NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(nvmlDeviceGetCurrPcieLinkGeneration(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 5u);
  ASSERT_EQ(nvmlDeviceGetMaxPcieLinkWidth(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 16u);
  ASSERT_EQ(nvmlDeviceGetIndex(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 0u);

  nvmlEnableState_t persistence, current, pending;
  ASSERT_EQ(nvmlDeviceGetPersistenceMode(device, &persistence), NVML_SUCCESS);
  EXPECT_EQ(persistence, NVML_FEATURE_ENABLED);
  ASSERT_EQ(nvmlDeviceGetEccMode(device, &current, &pending), NVML_SUCCESS);
  EXPECT_EQ(current, NVML_FEATURE_ENABLED);
  nvmlComputeMode_t mode;
  ASSERT_EQ(nvmlDeviceGetComputeMode(device, &mode), NVML_SUCCESS);
  EXPECT_EQ(mode, NVML_COMPUTEMODE_DEFAULT);
  unsigned long long supported = 0;
  ASSERT_EQ(nvmlDeviceGetSupportedClocksEventReasons(device, &supported), NVML_SUCCESS);
  EXPECT_EQ(supported, 0x1FFull);
  // SXM boards have no fan of their own.
  EXPECT_EQ(nvmlDeviceGetFanSpeed(device, &value), NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeNvmlTest, Rtx3090LacksEccAndIdlesItsPcieLink) {
  start_fixture("rtx3090.json");
  const nvmlDevice_t device = handle(0);
  nvmlEnableState_t current, pending;
  EXPECT_EQ(nvmlDeviceGetEccMode(device, &current, &pending), NVML_ERROR_NOT_SUPPORTED);
  unsigned value = 0;
  ASSERT_EQ(nvmlDeviceGetCurrPcieLinkGeneration(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 1u);
  at(1.5);
  ASSERT_EQ(nvmlDeviceGetCurrPcieLinkGeneration(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 4u);
  ASSERT_EQ(nvmlDeviceGetFanSpeed(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 55u);
  EXPECT_EQ(nvmlDeviceGetTemperatureThreshold(device, NVML_TEMPERATURE_THRESHOLD_MEM_MAX, &value),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeNvmlTest, ArgumentsAreCheckedLikeNvml) {
  start_fixture("h100_sxm.json");
  const nvmlDevice_t device = handle(0);
  char name[8];
  EXPECT_EQ(nvmlDeviceGetName(device, name, sizeof name), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(nvmlDeviceGetName(device, nullptr, 96), NVML_ERROR_INVALID_ARGUMENT);
  unsigned value = 0;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(device, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(nullptr, &value), NVML_ERROR_INVALID_ARGUMENT);
  int not_a_device = 0;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(reinterpret_cast<nvmlDevice_t>(&not_a_device), &value),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_COUNT, &value), NVML_ERROR_INVALID_ARGUMENT);
  nvmlDevice_t other = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(1, &other), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(0, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
}

TEST_F(FakeNvmlTest, HandleByUuidFindsGpusOnly) {
  start_fixture("a100_mig.json");
  nvmlDevice_t device = nullptr;
  ASSERT_EQ(nvmlDeviceGetHandleByUUID("GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", &device),
            NVML_SUCCESS);
  EXPECT_EQ(device, handle(0));
  EXPECT_EQ(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &device),
            NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvmlDeviceGetHandleByUUID("MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9", &device),
            NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvmlDeviceGetHandleByUUID(nullptr, &device), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvmlTest, HandlesFromAnEarlierScenarioAreRejectedNotFollowed) {
  start_fixture("two_gpus_one_lost.json");
  const nvmlDevice_t second = handle(1);
  ASSERT_EQ(gpuscope_fake_nvml_load_scenario_file(fixture_path("h100_sxm.json").c_str()), 0);
  unsigned power = 0;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(second, &power), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvmlTest, MemoryInfoV2ChecksItsVersionAndSplitsReservedMemory) {
  start_fixture("h100_sxm.json");
  at(1.5);
  nvmlMemory_v2_t memory{};
  memory.version = 0;
  EXPECT_EQ(nvmlDeviceGetMemoryInfo_v2(handle(0), &memory), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  memory.version = nvmlMemory_v2;
  ASSERT_EQ(nvmlDeviceGetMemoryInfo_v2(handle(0), &memory), NVML_SUCCESS);
  EXPECT_EQ(memory.total, 81559ULL << 20);
  EXPECT_EQ(memory.reserved, 594ULL << 20);
  EXPECT_EQ(memory.used, 60ULL << 30);
  EXPECT_EQ(memory.free, (81559ULL << 20) - (594ULL << 20) - (60ULL << 30));

  nvmlMemory_t old{};
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(handle(0), &old), NVML_SUCCESS);
  EXPECT_EQ(old.used, (594ULL << 20) + (60ULL << 30)) << "v1 counts reserved memory as used";
  EXPECT_EQ(old.free, memory.free);
}

TEST_F(FakeNvmlTest, TemperatureVChecksItsVersion) {
  start_fixture("h100_sxm.json");
  at(2.0);
  nvmlTemperature_t temperature{};
  temperature.version = nvmlTemperature_v1 + 1;
  temperature.sensorType = NVML_TEMPERATURE_GPU;
  EXPECT_EQ(nvmlDeviceGetTemperatureV(handle(0), &temperature),
            NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  temperature.version = nvmlTemperature_v1;
  ASSERT_EQ(nvmlDeviceGetTemperatureV(handle(0), &temperature), NVML_SUCCESS);
  EXPECT_EQ(temperature.temperature, 55);
}

TEST_F(FakeNvmlTest, ReadingsFollowTheTimelineAsSteps) {
  start_fixture("h100_sxm.json");
  const nvmlDevice_t device = handle(0);
  struct Expected {
    double t;
    unsigned power_mw, sm_mhz;
    unsigned long long reasons;
  };
  const Expected expectations[] = {
      {0.0, 70000, 345, 0x1},    {0.999, 70000, 345, 0x1},  {1.0, 420000, 1980, 0x0},
      {2.5, 650000, 1980, 0x0},  {3.0, 698000, 1755, 0x4},  {3.49, 698000, 1755, 0x4},
      {3.5, 650000, 1980, 0x0},  {4.99, 650000, 1980, 0x0}, {5.0, 75000, 345, 0x1},
      {1000.0, 75000, 345, 0x1},
  };
  for (const Expected& expected : expectations) {
    at(expected.t);
    unsigned power = 0, sm = 0;
    unsigned long long reasons = 99;
    ASSERT_EQ(nvmlDeviceGetPowerUsage(device, &power), NVML_SUCCESS);
    ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, &sm), NVML_SUCCESS);
    ASSERT_EQ(nvmlDeviceGetCurrentClocksEventReasons(device, &reasons), NVML_SUCCESS);
    EXPECT_EQ(power, expected.power_mw) << "t=" << expected.t;
    EXPECT_EQ(sm, expected.sm_mhz) << "t=" << expected.t;
    EXPECT_EQ(reasons, expected.reasons) << "t=" << expected.t;
  }
  // A reading an entry leaves out keeps its last value: memory clock is only given at t = 0.
  at(3.2);
  unsigned memory_clock = 0;
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_MEM, &memory_clock), NVML_SUCCESS);
  EXPECT_EQ(memory_clock, 2619u);
  nvmlUtilization_t utilization{};
  ASSERT_EQ(nvmlDeviceGetUtilizationRates(device, &utilization), NVML_SUCCESS);
  EXPECT_EQ(utilization.gpu, 100u);
  EXPECT_EQ(utilization.memory, 45u);
  // A reading no entry gives is not supported.
  EXPECT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_VIDEO, &memory_clock),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeNvmlTest, EnergyIsTheExactIntegralOfThePowerSteps) {
  start_fixture("h100_sxm.json");
  struct Expected {
    double t;
    unsigned long long consumed_mj;
  };
  // Power steps (W): 70 on [0,1), 420 on [1,2), 650 on [2,3), 698 on [3,3.5), 650 on [3.5,5),
  // 75 from 5 on.
  const Expected expectations[] = {
      {0.0, 0},
      {0.5, 35000},
      {1.0, 70000},
      {2.0, 70000 + 420000},
      {3.25, 70000 + 420000 + 650000 + 698000 / 4},
      {4.0, 70000 + 420000 + 650000 + 349000 + 325000},
      {5.0, 70000 + 420000 + 650000 + 349000 + 975000},
      {7.0, 70000 + 420000 + 650000 + 349000 + 975000 + 150000},
  };
  for (const Expected& expected : expectations) {
    at(expected.t);
    unsigned long long energy = 0;
    ASSERT_EQ(nvmlDeviceGetTotalEnergyConsumption(handle(0), &energy), NVML_SUCCESS);
    EXPECT_EQ(energy, kH100EnergyOffsetMj + expected.consumed_mj) << "t=" << expected.t;
  }
}

TEST_F(FakeNvmlTest, EnergyCounterAbsentIsNotSupported) {
  start_scenario(R"({"devices": [{"name": "x", "timeline": [{"t": 0, "power_mw": 1000}]}]})");
  unsigned long long energy = 0;
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(handle(0), &energy), NVML_ERROR_NOT_SUPPORTED);
}

nvmlFieldValue_t field(unsigned id, unsigned scope = 0) {
  nvmlFieldValue_t value;
  std::memset(&value, 0, sizeof value);
  value.fieldId = id;
  value.scopeId = scope;
  value.nvmlReturn = NVML_ERROR_UNKNOWN;  // so that a field left untouched shows
  return value;
}

TEST_F(FakeNvmlTest, FieldValuesCarryTheirOwnReturnCodes) {
  start_fixture("h100_sxm.json");
  at(4.0);
  std::vector<nvmlFieldValue_t> values = {
      field(NVML_FI_DEV_POWER_INSTANT),
      field(NVML_FI_DEV_POWER_AVERAGE),
      field(NVML_FI_DEV_MEMORY_TEMP),
      field(NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP),
      field(NVML_FI_DEV_PERF_POLICY_THERMAL),
      field(NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN),
      field(NVML_FI_DEV_PCIE_REPLAY_COUNTER),  // not modelled
      field(NVML_FI_MAX + 5),                  // no such field
      field(NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MODULE),
  };
  ASSERT_EQ(nvmlDeviceGetFieldValues(handle(0), static_cast<int>(values.size()), values.data()),
            NVML_SUCCESS);
  EXPECT_EQ(values[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[0].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_EQ(values[0].value.uiVal, 650000u);
  // Mean over [3, 4]: 698 W for 0.5 s, 650 W for 0.5 s.
  EXPECT_EQ(values[1].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[1].value.uiVal, 674000u);
  EXPECT_EQ(values[2].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[2].value.uiVal, 66u);
  // The power cap held on [3, 3.5).
  EXPECT_EQ(values[3].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[3].valueType, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  EXPECT_EQ(values[3].value.ullVal, 500'000'000ull);
  EXPECT_EQ(values[4].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[4].value.ullVal, 0ull);
  EXPECT_EQ(values[5].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[5].value.ullVal, 0ull);
  EXPECT_EQ(values[6].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(values[7].nvmlReturn, NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(values[8].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_GT(values[0].timestamp, 0);
}

TEST_F(FakeNvmlTest, AveragePowerLooksBackOneSecond) {
  start_fixture("h100_sxm.json");
  at(3.25);
  nvmlFieldValue_t value = field(NVML_FI_DEV_POWER_AVERAGE);
  ASSERT_EQ(nvmlDeviceGetFieldValues(handle(0), 1, &value), NVML_SUCCESS);
  ASSERT_EQ(value.nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(value.value.uiVal, 650000u * 3 / 4 + 698000u / 4);
}

TEST_F(FakeNvmlTest, MemoryTemperatureMissingOnTheRtx3090) {
  start_fixture("rtx3090.json");
  std::vector<nvmlFieldValue_t> values = {field(NVML_FI_DEV_MEMORY_TEMP),
                                          field(NVML_FI_DEV_POWER_INSTANT)};
  ASSERT_EQ(nvmlDeviceGetFieldValues(handle(0), 2, values.data()), NVML_SUCCESS);
  EXPECT_EQ(values[0].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(values[1].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[1].value.uiVal, 31000u);
}

TEST_F(FakeNvmlTest, NvlinkThroughputIsIntegratedPerLink) {
  start_scenario(R"({"devices": [{"name": "x", "nvlink": {"link_count": 4},
      "unsupported_fields": [139],
      "timeline": [{"t": 0, "nvlink_tx_kibps": 1000, "nvlink_rx_kibps": 10},
                   {"t": 2, "nvlink_tx_kibps": 3000}]}]})");
  at(3.0);
  std::vector<nvmlFieldValue_t> values = {
      field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 0xFFFFFFFFu),
      field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 3),
      field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 4),
      field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, 0),
      field(NVML_FI_DEV_NVLINK_LINK_COUNT),
  };
  ASSERT_EQ(nvmlDeviceGetFieldValues(handle(0), static_cast<int>(values.size()), values.data()),
            NVML_SUCCESS);
  EXPECT_EQ(values[0].value.ullVal, 5000ull);  // 1000 KiB/s x 2 s + 3000 KiB/s x 1 s
  EXPECT_EQ(values[1].value.ullVal, 1250ull);
  EXPECT_EQ(values[2].nvmlReturn, NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(values[3].nvmlReturn, NVML_ERROR_NOT_SUPPORTED) << "unsupported_fields";
  EXPECT_EQ(values[4].value.uiVal, 4u);
}

TEST_F(FakeNvmlTest, TopologyTellsThePciePathAndWhereEachNvlinkGoes) {
  start_scenario(R"({"devices": [
      {"name": "a", "pci_bus_id": "00000000:18:00.0",
       "nvlink": {"link_count": 4, "peers": {"1": 3}}, "pcie_topology": {"2": 30}},
      {"name": "b", "pci_bus_id": "00000000:2a:00.0", "nvlink": {"link_count": 4}},
      {"name": "c", "pci_bus_id": "00000000:3b:00.0"}]})");
  nvmlEnableState_t active{};
  for (unsigned link = 0; link < 3; ++link) {
    ASSERT_EQ(nvmlDeviceGetNvLinkState(handle(0), link, &active), NVML_SUCCESS);
    EXPECT_EQ(active, NVML_FEATURE_ENABLED) << link;
  }
  ASSERT_EQ(nvmlDeviceGetNvLinkState(handle(0), 3, &active), NVML_SUCCESS);
  EXPECT_EQ(active, NVML_FEATURE_DISABLED) << "beyond the peers' links";
  EXPECT_EQ(nvmlDeviceGetNvLinkState(handle(0), 4, &active), NVML_ERROR_INVALID_ARGUMENT);
  nvmlPciInfo_t pci{};
  ASSERT_EQ(nvmlDeviceGetNvLinkRemotePciInfo_v2(handle(0), 2, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:2A:00.0");
  EXPECT_EQ(nvmlDeviceGetNvLinkRemotePciInfo_v2(handle(0), 3, &pci), NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(nvmlDeviceGetNvLinkState(handle(1), 3, &active), NVML_SUCCESS);
  EXPECT_EQ(active, NVML_FEATURE_ENABLED) << "no peers given: every link up, far end unknown";
  EXPECT_EQ(nvmlDeviceGetNvLinkRemotePciInfo_v2(handle(1), 0, &pci), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetNvLinkState(handle(2), 0, &active), NVML_ERROR_NOT_SUPPORTED);
  nvmlGpuTopologyLevel_t level{};
  ASSERT_EQ(nvmlDeviceGetTopologyCommonAncestor(handle(0), handle(2), &level), NVML_SUCCESS);
  EXPECT_EQ(level, NVML_TOPOLOGY_HOSTBRIDGE);
  EXPECT_EQ(nvmlDeviceGetTopologyCommonAncestor(handle(0), handle(1), &level),
            NVML_ERROR_NOT_SUPPORTED);
  // More links to peers than the GPU has is a broken scenario.
  EXPECT_NE(gpuscope_fake_nvml_load_scenario(
                R"({"devices": [{"name": "a", "nvlink": {"link_count": 2, "peers": {"1": 3}}},
                                {"name": "b"}]})"),
            0);
}

TEST_F(FakeNvmlTest, SetPowerLimitIsValidatedAndChangesTheGetters) {
  start_fixture("h100_sxm.json");
  const nvmlDevice_t device = handle(0);
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 0u);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 199999), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 700001), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 0u);

  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 450000), NVML_SUCCESS);
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 450000u);
  unsigned limit = 0;
  ASSERT_EQ(nvmlDeviceGetPowerManagementLimit(device, &limit), NVML_SUCCESS);
  EXPECT_EQ(limit, 450000u);
  ASSERT_EQ(nvmlDeviceGetEnforcedPowerLimit(device, &limit), NVML_SUCCESS);
  EXPECT_EQ(limit, 450000u);
  ASSERT_EQ(nvmlDeviceGetPowerManagementDefaultLimit(device, &limit), NVML_SUCCESS);
  EXPECT_EQ(limit, 700000u) << "the default does not move";
  nvmlFieldValue_t value = field(NVML_FI_DEV_POWER_CURRENT_LIMIT);
  ASSERT_EQ(nvmlDeviceGetFieldValues(device, 1, &value), NVML_SUCCESS);
  EXPECT_EQ(value.value.uiVal, 450000u);

  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 200000), NVML_SUCCESS) << "min is allowed";
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 200000u);
  gpuscope_fake_nvml_reset();
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 0u);
}

TEST_F(FakeNvmlTest, SetPowerLimitHonoursScriptedErrors) {
  start_scenario(R"({"devices": [{"name": "x", "min_power_limit_mw": 100000,
      "max_power_limit_mw": 300000, "power_limit_mw": 300000}],
      "errors": [{"function": "nvmlDeviceSetPowerManagementLimit", "until_t": 1,
                  "return": "NVML_ERROR_NO_PERMISSION"}]})");
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(handle(0), 200000), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 0u);
  at(1.0);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(handle(0), 200000), NVML_SUCCESS);
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 200000u);
}

TEST_F(FakeNvmlTest, LockableClocksAreListedForTheMemoryClock) {
  start_fixture("rtx3090_power_sweep.json");  // graphics 2100 MHz max, memory 9751 MHz
  const nvmlDevice_t device = handle(0);
  unsigned memory[4] = {}, count = 4;
  ASSERT_EQ(nvmlDeviceGetSupportedMemoryClocks(device, &count, memory), NVML_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(memory[0], 9751u);
  std::vector<unsigned> clocks(4);
  count = 4;
  EXPECT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device, 9751, &count, clocks.data()),
            NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(count, 127u);  // 2100 down to 210 in 15 MHz steps
  clocks.resize(count);
  ASSERT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device, 9751, &count, clocks.data()),
            NVML_SUCCESS);
  EXPECT_EQ(clocks.front(), 2100u);
  EXPECT_EQ(clocks[1], 2085u);
  EXPECT_EQ(clocks.back(), 210u);
  EXPECT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device, 5001, &count, clocks.data()),
            NVML_ERROR_NOT_FOUND);
}

TEST_F(FakeNvmlTest, AClockLockBelowWhatTheLimitAllowsSetsSpeedPowerAndReasons) {
  start_fixture("rtx3090_power_sweep.json");
  const nvmlDevice_t device = handle(0);
  ASSERT_EQ(gpuscope_fake_nvml_start_workload(0, "fp32_train", static_cast<long>(getpid())), 0)
      << gpuscope_fake_nvml_last_error();
  auto reading = [&](auto fn) {
    unsigned value = 0;
    EXPECT_EQ(fn(device, &value), NVML_SUCCESS);
    return value;
  };
  auto sm_clock = [&] {
    return reading(
        [](nvmlDevice_t d, unsigned* v) { return nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, v); });
  };
  auto reasons = [&] {
    unsigned long long mask = 0;
    EXPECT_EQ(nvmlDeviceGetCurrentClocksEventReasons(device, &mask), NVML_SUCCESS);
    return mask;
  };
  // At the stock 390 W: 95.7 % of the peak speed, 1866 MHz, power-capped.
  EXPECT_NEAR(gpuscope_fake_nvml_workload_samples_per_second(0), 310 * 0.957, 0.01);
  EXPECT_EQ(sm_clock(), 1866u);
  EXPECT_EQ(reasons(), 0x4u);
  unsigned low = 0, high = 0;
  EXPECT_EQ(gpuscope_fake_nvml_locked_clocks_mhz(0, &low, &high), 0);

  EXPECT_EQ(nvmlDeviceSetGpuLockedClocks(device, 1800, 1700), NVML_ERROR_INVALID_ARGUMENT);
  // Locked at 90 % of the 1950 MHz peak: 90 % of the speed, at the 330 W the curve draws there.
  ASSERT_EQ(nvmlDeviceSetGpuLockedClocks(device, 1755, 1755), NVML_SUCCESS);
  ASSERT_EQ(gpuscope_fake_nvml_locked_clocks_mhz(0, &low, &high), 1);
  EXPECT_EQ(low, 1755u);
  EXPECT_EQ(high, 1755u);
  EXPECT_NEAR(gpuscope_fake_nvml_workload_samples_per_second(0), 310 * 0.9, 0.01);
  EXPECT_EQ(sm_clock(), 1755u);
  EXPECT_EQ(reading(nvmlDeviceGetPowerUsage), 330000u);
  EXPECT_EQ(reasons(), 0x2u);  // ApplicationsClocksSetting: the lock, not the power cap

  // A lock above what the limit allows changes nothing.
  ASSERT_EQ(nvmlDeviceSetGpuLockedClocks(device, 1950, 1950), NVML_SUCCESS);
  EXPECT_EQ(sm_clock(), 1866u);
  EXPECT_EQ(reading(nvmlDeviceGetPowerUsage), 390000u);

  ASSERT_EQ(nvmlDeviceSetGpuLockedClocks(device, 1755, 1755), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceResetGpuLockedClocks(device), NVML_SUCCESS);
  EXPECT_EQ(gpuscope_fake_nvml_locked_clocks_mhz(0, &low, &high), 0);
  EXPECT_EQ(sm_clock(), 1866u);
  gpuscope_fake_nvml_stop_workload(0);
}

TEST_F(FakeNvmlTest, ClocksCannotBeLockedWithoutTheirMaxima) {
  start_scenario(R"({"devices": [{"name": "x", "max_clocks": {"sm_mhz": 1400}}]})");
  unsigned count = 4, clocks[4] = {};
  EXPECT_EQ(nvmlDeviceGetSupportedMemoryClocks(handle(0), &count, clocks),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceSetGpuLockedClocks(handle(0), 1000, 1000), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceResetGpuLockedClocks(handle(0)), NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeNvmlTest, RunningProcessesFollowTheSizeProtocol) {
  start_fixture("h100_sxm.json");
  const nvmlDevice_t device = handle(0);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, nullptr), NVML_SUCCESS)
      << "nothing runs at t = 0";
  EXPECT_EQ(count, 0u);

  at(1.5);
  count = 0;
  ASSERT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, nullptr),
            NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(count, 1u);
  std::vector<nvmlProcessInfo_t> infos(4);
  count = 4;
  ASSERT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, infos.data()), NVML_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(infos[0].pid, 4242u);
  EXPECT_EQ(infos[0].usedGpuMemory, 60ULL << 30);
  EXPECT_EQ(infos[0].gpuInstanceId, 0xFFFFFFFFu);
}

TEST_F(FakeNvmlTest, ProcessUtilizationIsNewOncePerStep) {
  start_fixture("h100_sxm.json");
  const nvmlDevice_t device = handle(0);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device, nullptr, &count, 0), NVML_ERROR_NOT_FOUND);
  at(1.5);
  ASSERT_EQ(nvmlDeviceGetProcessUtilization(device, nullptr, &count, 0),
            NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(count, 1u);
  nvmlProcessUtilizationSample_t sample{};
  ASSERT_EQ(nvmlDeviceGetProcessUtilization(device, &sample, &count, 0), NVML_SUCCESS);
  EXPECT_EQ(sample.pid, 4242u);
  EXPECT_EQ(sample.smUtil, 98u);
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device, &sample, &count, sample.timeStamp),
            NVML_ERROR_NOT_FOUND)
      << "nothing newer than what was seen";
}

}  // namespace
}  // namespace gpuscope::fake_nvml
