// GPM (Hopper and newer): a sample records the scenario time it was taken at; the metrics
// between two samples are the time-weighted means of the timeline's "gpm" readings over that
// interval. Samples taken on a MIG GPU instance read the parent GPU's timeline.
#include <algorithm>
#include <array>
#include <memory>
#include <string_view>
#include <utility>

#include "api_call.h"

using gpuscope::fake_nvml::ApiCall;

namespace {

namespace fake = gpuscope::fake_nvml;

struct GpmMetricReading {
  unsigned metric_id;
  std::string_view reading;
};

constexpr std::array kGpmMetricReadings = {
    GpmMetricReading{NVML_GPM_METRIC_GRAPHICS_UTIL, "gpm.graphics_util"},
    GpmMetricReading{NVML_GPM_METRIC_SM_UTIL, "gpm.sm_util"},
    GpmMetricReading{NVML_GPM_METRIC_SM_OCCUPANCY, "gpm.sm_occupancy"},
    GpmMetricReading{NVML_GPM_METRIC_ANY_TENSOR_UTIL, "gpm.any_tensor_util"},
    GpmMetricReading{NVML_GPM_METRIC_DRAM_BW_UTIL, "gpm.dram_bw_util"},
    GpmMetricReading{NVML_GPM_METRIC_FP64_UTIL, "gpm.fp64_util"},
    GpmMetricReading{NVML_GPM_METRIC_FP32_UTIL, "gpm.fp32_util"},
    GpmMetricReading{NVML_GPM_METRIC_FP16_UTIL, "gpm.fp16_util"},
};

// The live sample behind `handle`, or nullptr for anything nvmlGpmSampleAlloc did not return
// (or that was freed since).
nvmlGpmSample_st* find_sample(fake::State& state, nvmlGpmSample_t handle) {
  const auto it = state.gpm_samples.find(handle);
  return it == state.gpm_samples.end() ? nullptr : it->second.get();
}

nvmlReturn_t take_sample(ApiCall& call, nvmlGpmSample_t handle,
                         std::optional<unsigned> gpu_instance_id) {
  nvmlGpmSample_st* sample = find_sample(call.state(), handle);
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!call.device().gpm_supported) return NVML_ERROR_NOT_SUPPORTED;
  sample->taken = true;
  sample->device_index = call.device_index();
  sample->gpu_instance_id = gpu_instance_id;
  sample->t = call.now();
  return NVML_SUCCESS;
}

void fill_metric(const fake::Device& device, double from, double to, nvmlGpmMetric_t& metric) {
  metric.value = 0.0;
  metric.metricInfo.shortName = nullptr;  // the header allows NULL names
  metric.metricInfo.longName = nullptr;
  metric.metricInfo.unit = nullptr;
  if (metric.metricId >= NVML_GPM_METRIC_MAX) {
    metric.nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
    return;
  }
  const auto known = std::find_if(
      kGpmMetricReadings.begin(), kGpmMetricReadings.end(),
      [&](const GpmMetricReading& entry) { return entry.metric_id == metric.metricId; });
  const fake::StepSeries* series =
      known == kGpmMetricReadings.end() ? nullptr : device.timeline.reading(known->reading);
  if (series == nullptr) {
    metric.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    return;
  }
  metric.nvmlReturn = NVML_SUCCESS;
  metric.value = fake::mean(*series, from, to);
}

}  // namespace

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device,
                                                                 nvmlGpmSupport_t* gpmSupport) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (gpmSupport == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION) {
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  gpmSupport->isSupportedDevice = call.device().gpm_supported ? 1 : 0;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* gpmSample) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_system(); rc != NVML_SUCCESS) return rc;
  if (gpmSample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto sample = std::make_unique<nvmlGpmSample_st>();
  *gpmSample = sample.get();
  call.state().gpm_samples.emplace(sample.get(), std::move(sample));
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_system(); rc != NVML_SUCCESS) return rc;
  if (call.state().gpm_samples.erase(gpmSample) == 0) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device,
                                                        nvmlGpmSample_t gpmSample) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return take_sample(call, gpmSample, std::nullopt);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device,
                                                           unsigned int gpuInstanceId,
                                                           nvmlGpmSample_t gpmSample) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (!call.device().gpm_supported) return NVML_ERROR_NOT_SUPPORTED;
  const auto& mig = call.device().mig;
  if (!mig || !mig->current) return NVML_ERROR_NOT_SUPPORTED;
  const bool known = std::any_of(
      mig->instances.begin(), mig->instances.end(),
      [&](const fake::MigInstance& instance) { return instance.gpu_instance_id == gpuInstanceId; });
  if (!known) return NVML_ERROR_INVALID_ARGUMENT;
  return take_sample(call, gpmSample, gpuInstanceId);
}

// Both samples must have been taken, on the same GPU (and GPU instance); the device they name
// must still be there, as for any call on it.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* metricsGet) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_system(); rc != NVML_SUCCESS) return rc;
  if (metricsGet == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (metricsGet->version != NVML_GPM_METRICS_GET_VERSION) {
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  if (metricsGet->numMetrics > NVML_GPM_METRIC_MAX) return NVML_ERROR_INVALID_ARGUMENT;
  const nvmlGpmSample_st* first = find_sample(call.state(), metricsGet->sample1);
  const nvmlGpmSample_st* second = find_sample(call.state(), metricsGet->sample2);
  if (first == nullptr || second == nullptr || !first->taken || !second->taken ||
      first->device_index != second->device_index ||
      first->gpu_instance_id != second->gpu_instance_id) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (const nvmlReturn_t rc = call.check_index(first->device_index); rc != NVML_SUCCESS) {
    return rc;
  }
  const double from = std::min(first->t, second->t);
  const double to = std::max(first->t, second->t);
  for (unsigned i = 0; i < metricsGet->numMetrics; ++i) {
    fill_metric(call.device(), from, to, metricsGet->metrics[i]);
  }
  return NVML_SUCCESS;
}
