// GPM samples and metrics, and MIG enumeration, on the fixtures.
#include <gtest/gtest.h>

#include "fake_nvml_test_util.h"

namespace gpuscope::fake_nvml {
namespace {

nvmlGpmMetricsGet_t metrics_request(nvmlGpmSample_t first, nvmlGpmSample_t second) {
  nvmlGpmMetricsGet_t request{};
  request.version = NVML_GPM_METRICS_GET_VERSION;
  request.sample1 = first;
  request.sample2 = second;
  const unsigned ids[] = {NVML_GPM_METRIC_ANY_TENSOR_UTIL, NVML_GPM_METRIC_SM_UTIL,
                          NVML_GPM_METRIC_NVDEC_0_UTIL, NVML_GPM_METRIC_MAX + 1};
  for (unsigned id : ids) {
    request.metrics[request.numMetrics].metricId = id;
    request.metrics[request.numMetrics].nvmlReturn = NVML_ERROR_UNKNOWN;
    ++request.numMetrics;
  }
  return request;
}

TEST_F(FakeNvmlTest, GpmSupportQueryChecksItsVersion) {
  start_fixture("h100_sxm.json");
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION + 1;
  EXPECT_EQ(nvmlGpmQueryDeviceSupport(handle(0), &support), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  support.version = NVML_GPM_SUPPORT_VERSION;
  ASSERT_EQ(nvmlGpmQueryDeviceSupport(handle(0), &support), NVML_SUCCESS);
  EXPECT_EQ(support.isSupportedDevice, 1u);
}

TEST_F(FakeNvmlTest, GpmMetricsAreTimeWeightedMeansBetweenSamples) {
  start_fixture("h100_sxm.json");
  nvmlGpmSample_t first = nullptr, second = nullptr;
  ASSERT_EQ(nvmlGpmSampleAlloc(&first), NVML_SUCCESS);
  ASSERT_EQ(nvmlGpmSampleAlloc(&second), NVML_SUCCESS);
  at(1.5);
  ASSERT_EQ(nvmlGpmSampleGet(handle(0), first), NVML_SUCCESS);
  at(3.25);
  ASSERT_EQ(nvmlGpmSampleGet(handle(0), second), NVML_SUCCESS);

  nvmlGpmMetricsGet_t request = metrics_request(first, second);
  ASSERT_EQ(nvmlGpmMetricsGet(&request), NVML_SUCCESS);
  // Tensor: 60% on [1.5, 2), 80% on [2, 3.25). SM: 85% then 95%.
  EXPECT_EQ(request.metrics[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_NEAR(request.metrics[0].value, (60 * 0.5 + 80 * 1.25) / 1.75, 1e-9);
  EXPECT_EQ(request.metrics[1].nvmlReturn, NVML_SUCCESS);
  EXPECT_NEAR(request.metrics[1].value, (85 * 0.5 + 95 * 1.25) / 1.75, 1e-9);
  EXPECT_EQ(request.metrics[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED) << "not in the timeline";
  EXPECT_EQ(request.metrics[3].nvmlReturn, NVML_ERROR_INVALID_ARGUMENT) << "no such metric";

  // Sample order does not matter.
  nvmlGpmMetricsGet_t reversed = metrics_request(second, first);
  ASSERT_EQ(nvmlGpmMetricsGet(&reversed), NVML_SUCCESS);
  EXPECT_NEAR(reversed.metrics[0].value, request.metrics[0].value, 1e-9);

  nvmlGpmMetricsGet_t wrong_version = metrics_request(first, second);
  wrong_version.version = NVML_GPM_METRICS_GET_VERSION + 1;
  EXPECT_EQ(nvmlGpmMetricsGet(&wrong_version), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);

  ASSERT_EQ(nvmlGpmSampleFree(second), NVML_SUCCESS);
  EXPECT_EQ(nvmlGpmSampleFree(second), NVML_ERROR_INVALID_ARGUMENT) << "freed twice";
  nvmlGpmMetricsGet_t freed = metrics_request(first, second);
  EXPECT_EQ(nvmlGpmMetricsGet(&freed), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlGpmSampleFree(first), NVML_SUCCESS);
}

TEST_F(FakeNvmlTest, GpmNeedsTwoTakenSamples) {
  start_fixture("h100_sxm.json");
  nvmlGpmSample_t first = nullptr, second = nullptr;
  ASSERT_EQ(nvmlGpmSampleAlloc(&first), NVML_SUCCESS);
  ASSERT_EQ(nvmlGpmSampleAlloc(&second), NVML_SUCCESS);
  ASSERT_EQ(nvmlGpmSampleGet(handle(0), first), NVML_SUCCESS);
  nvmlGpmMetricsGet_t request = metrics_request(first, second);
  EXPECT_EQ(nvmlGpmMetricsGet(&request), NVML_ERROR_INVALID_ARGUMENT);
  nvmlGpmSampleFree(first);
  nvmlGpmSampleFree(second);
}

TEST_F(FakeNvmlTest, GpmIsNotSupportedBeforeHopper) {
  start_fixture("rtx3090.json");
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  ASSERT_EQ(nvmlGpmQueryDeviceSupport(handle(0), &support), NVML_SUCCESS);
  EXPECT_EQ(support.isSupportedDevice, 0u);
  nvmlGpmSample_t sample = nullptr;
  ASSERT_EQ(nvmlGpmSampleAlloc(&sample), NVML_SUCCESS);
  EXPECT_EQ(nvmlGpmSampleGet(handle(0), sample), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlGpmSampleFree(sample), NVML_SUCCESS);
}

struct ExpectedMig {
  const char* name;
  const char* uuid;
  unsigned gpu_instance_id;
  unsigned sm_count;
  unsigned slices;
  unsigned long long memory_mib;
};

TEST_F(FakeNvmlTest, MigDevicesOfTheA100) {
  start_fixture("a100_mig.json");
  const nvmlDevice_t gpu = handle(0);
  unsigned current = 0, pending = 0;
  ASSERT_EQ(nvmlDeviceGetMigMode(gpu, &current, &pending), NVML_SUCCESS);
  EXPECT_EQ(current, static_cast<unsigned>(NVML_DEVICE_MIG_ENABLE));
  EXPECT_EQ(pending, static_cast<unsigned>(NVML_DEVICE_MIG_ENABLE));
  unsigned max_count = 0;
  ASSERT_EQ(nvmlDeviceGetMaxMigDeviceCount(gpu, &max_count), NVML_SUCCESS);
  ASSERT_EQ(max_count, 7u);

  const ExpectedMig expected[] = {
      {"NVIDIA A100-SXM4-40GB MIG 3g.20gb", "MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9", 1, 42, 3,
       19968},
      {"NVIDIA A100-SXM4-40GB MIG 2g.10gb", "MIG-2a3b4c5d-6e7f-5a8b-9c0d-1e2f3a4b5c6d", 5, 28, 2,
       9856},
      {"NVIDIA A100-SXM4-40GB MIG 1g.5gb", "MIG-3c4d5e6f-7a8b-5c9d-0e1f-2a3b4c5d6e7f", 13, 14, 1,
       4864},
  };
  for (unsigned i = 0; i < 3; ++i) {
    nvmlDevice_t mig = nullptr;
    ASSERT_EQ(nvmlDeviceGetMigDeviceHandleByIndex(gpu, i, &mig), NVML_SUCCESS);
    ASSERT_NE(mig, gpu);
    char text[96] = {};
    ASSERT_EQ(nvmlDeviceGetName(mig, text, sizeof text), NVML_SUCCESS);
    EXPECT_STREQ(text, expected[i].name);
    ASSERT_EQ(nvmlDeviceGetUUID(mig, text, sizeof text), NVML_SUCCESS);
    EXPECT_STREQ(text, expected[i].uuid);
    unsigned value = 99;
    ASSERT_EQ(nvmlDeviceIsMigDeviceHandle(mig, &value), NVML_SUCCESS);
    EXPECT_EQ(value, 1u);
    ASSERT_EQ(nvmlDeviceGetGpuInstanceId(mig, &value), NVML_SUCCESS);
    EXPECT_EQ(value, expected[i].gpu_instance_id);
    ASSERT_EQ(nvmlDeviceGetComputeInstanceId(mig, &value), NVML_SUCCESS);
    EXPECT_EQ(value, 0u);
    nvmlDeviceAttributes_t attributes{};
    ASSERT_EQ(nvmlDeviceGetAttributes_v2(mig, &attributes), NVML_SUCCESS);
    EXPECT_EQ(attributes.multiprocessorCount, expected[i].sm_count);
    EXPECT_EQ(attributes.gpuInstanceSliceCount, expected[i].slices);
    EXPECT_EQ(attributes.memorySizeMB, expected[i].memory_mib);
    nvmlMemory_v2_t memory{};
    memory.version = nvmlMemory_v2;
    ASSERT_EQ(nvmlDeviceGetMemoryInfo_v2(mig, &memory), NVML_SUCCESS);
    EXPECT_EQ(memory.total, expected[i].memory_mib << 20);
    // Calls that only make sense for a whole GPU.
    EXPECT_EQ(nvmlDeviceGetPowerUsage(mig, &value), NVML_ERROR_NOT_SUPPORTED);
  }
  nvmlDevice_t mig = nullptr;
  EXPECT_EQ(nvmlDeviceGetMigDeviceHandleByIndex(gpu, 3, &mig), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvmlDeviceGetMigDeviceHandleByIndex(gpu, 7, &mig), NVML_ERROR_INVALID_ARGUMENT);

  unsigned value = 99;
  ASSERT_EQ(nvmlDeviceIsMigDeviceHandle(gpu, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 0u);
  EXPECT_EQ(nvmlDeviceGetGpuInstanceId(gpu, &value), NVML_ERROR_INVALID_ARGUMENT);
  nvmlDeviceAttributes_t attributes{};
  EXPECT_EQ(nvmlDeviceGetAttributes_v2(gpu, &attributes), NVML_ERROR_NOT_SUPPORTED);
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  ASSERT_EQ(nvmlGpmQueryDeviceSupport(gpu, &support), NVML_SUCCESS);
  EXPECT_EQ(support.isSupportedDevice, 0u) << "Ampere";
}

TEST_F(FakeNvmlTest, MigOffOnTheH100) {
  start_fixture("h100_sxm.json");
  unsigned current = 99, pending = 99, count = 99;
  ASSERT_EQ(nvmlDeviceGetMigMode(handle(0), &current, &pending), NVML_SUCCESS);
  EXPECT_EQ(current, static_cast<unsigned>(NVML_DEVICE_MIG_DISABLE));
  ASSERT_EQ(nvmlDeviceGetMaxMigDeviceCount(handle(0), &count), NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
  nvmlDevice_t mig = nullptr;
  EXPECT_EQ(nvmlDeviceGetMigDeviceHandleByIndex(handle(0), 0, &mig), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvmlTest, MigNotSupportedOnTheRtx3090) {
  start_fixture("rtx3090.json");
  unsigned current = 0, pending = 0;
  EXPECT_EQ(nvmlDeviceGetMigMode(handle(0), &current, &pending), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetMaxMigDeviceCount(handle(0), &current), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceIsMigDeviceHandle(handle(0), &current), NVML_ERROR_NOT_SUPPORTED);
  nvmlDevice_t mig = nullptr;
  EXPECT_EQ(nvmlDeviceGetMigDeviceHandleByIndex(handle(0), 0, &mig), NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeNvmlTest, MigSamplesNeedAKnownGpuInstance) {
  start_scenario(R"({"devices": [{"name": "H100 with MIG", "gpm_supported": true,
      "mig": {"current": true, "instances": [
        {"gpu_instance_id": 9, "compute_instance_id": 0, "name": "NVIDIA H100 MIG 1g.10gb",
         "memory_total_bytes": 10737418240, "sm_count": 16}]},
      "timeline": [{"t": 0, "gpm": {"sm_util": 10}}, {"t": 1, "gpm": {"sm_util": 30}}]}]})");
  nvmlGpmSample_t first = nullptr, second = nullptr, gpu_sample = nullptr;
  ASSERT_EQ(nvmlGpmSampleAlloc(&first), NVML_SUCCESS);
  ASSERT_EQ(nvmlGpmSampleAlloc(&second), NVML_SUCCESS);
  ASSERT_EQ(nvmlGpmSampleAlloc(&gpu_sample), NVML_SUCCESS);
  EXPECT_EQ(nvmlGpmMigSampleGet(handle(0), 3, first), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(nvmlGpmMigSampleGet(handle(0), 9, first), NVML_SUCCESS);
  ASSERT_EQ(nvmlGpmSampleGet(handle(0), gpu_sample), NVML_SUCCESS);
  at(2.0);
  ASSERT_EQ(nvmlGpmMigSampleGet(handle(0), 9, second), NVML_SUCCESS);

  nvmlGpmMetricsGet_t request{};
  request.version = NVML_GPM_METRICS_GET_VERSION;
  request.numMetrics = 1;
  request.metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
  request.sample1 = first;
  request.sample2 = second;
  ASSERT_EQ(nvmlGpmMetricsGet(&request), NVML_SUCCESS);
  EXPECT_NEAR(request.metrics[0].value, 20.0, 1e-9);
  request.sample1 = gpu_sample;
  EXPECT_EQ(nvmlGpmMetricsGet(&request), NVML_ERROR_INVALID_ARGUMENT)
      << "a GPU sample and a GPU-instance sample do not pair";
  for (nvmlGpmSample_t sample : {first, second, gpu_sample}) nvmlGpmSampleFree(sample);
}

}  // namespace
}  // namespace gpuscope::fake_nvml
