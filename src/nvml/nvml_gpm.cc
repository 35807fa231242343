// GPM (GPU performance monitoring, Hopper and newer): metrics computed by NVML from two samples
// of the GPU's counters taken at least 100 ms apart.
#include <fmt/format.h>

#include "gpuscope/nvml.h"
#include "nvml/nvml_api.h"
#include "nvml/nvml_error.h"

namespace gpuscope::nvml {
namespace {

// One request computes all of them; a metric the GPU lacks comes back on its own, not_supported.
constexpr std::array<unsigned, 10> kMetrics = {
    NVML_GPM_METRIC_SM_UTIL,         NVML_GPM_METRIC_ANY_TENSOR_UTIL,
    NVML_GPM_METRIC_DRAM_BW_UTIL,    NVML_GPM_METRIC_GRAPHICS_UTIL,
    NVML_GPM_METRIC_SM_OCCUPANCY,    NVML_GPM_METRIC_FP64_UTIL,
    NVML_GPM_METRIC_FP32_UTIL,       NVML_GPM_METRIC_FP16_UTIL,
    NVML_GPM_METRIC_PCIE_TX_PER_SEC, NVML_GPM_METRIC_PCIE_RX_PER_SEC};

// GPM reports percentages; gpuscope's data model holds fractions.
std::optional<double> as_fraction(const nvmlGpmMetric_t& metric) {
  if (metric.nvmlReturn != NVML_SUCCESS) return std::nullopt;
  return metric.value / 100.0;
}

// GPM's PCIe rates are MiB/s.
std::optional<double> as_bytes_per_s(const nvmlGpmMetric_t& metric) {
  if (metric.nvmlReturn != NVML_SUCCESS) return std::nullopt;
  return metric.value * 1024.0 * 1024.0;
}

}  // namespace

GpmSampler::GpmSampler(const Device& device, std::optional<unsigned> gpu_instance_id)
    : api_(device.api_), handle_(device.handle_), gpu_instance_id_(gpu_instance_id) {}

Result<std::unique_ptr<GpmSampler>> GpmSampler::open(const Device& device,
                                                     std::optional<unsigned> gpu_instance_id) {
  GPUSCOPE_ASSIGN_OR_RETURN(bool supported, device.gpm_supported());
  if (!supported) return Status(Code::not_supported, "this GPU has no GPM metrics");
  const detail::Api& api = *device.api_;
  if (api.nvmlGpmSampleAlloc == nullptr || api.nvmlGpmSampleFree == nullptr ||
      api.nvmlGpmMetricsGet == nullptr ||
      (gpu_instance_id ? api.nvmlGpmMigSampleGet == nullptr : api.nvmlGpmSampleGet == nullptr)) {
    return Status(Code::not_supported, "this NVML library lacks the GPM functions");
  }
  std::unique_ptr<GpmSampler> sampler(new GpmSampler(device, gpu_instance_id));
  for (nvmlGpmSample_st*& buffer : sampler->buffers_) {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(api, nvmlGpmSampleAlloc, &buffer));
  }
  return sampler;
}

GpmSampler::~GpmSampler() {
  for (nvmlGpmSample_st* buffer : buffers_) {
    if (buffer != nullptr) api_->nvmlGpmSampleFree(buffer);
  }
}

Status GpmSampler::take(nvmlGpmSample_st* buffer) {
  if (gpu_instance_id_) {
    return GPUSCOPE_NVML_CALL(*api_, nvmlGpmMigSampleGet, handle_, *gpu_instance_id_, buffer);
  }
  return GPUSCOPE_NVML_CALL(*api_, nvmlGpmSampleGet, handle_, buffer);
}

Result<std::optional<GpmMetrics>> GpmSampler::sample(std::chrono::steady_clock::time_point now) {
  if (previous_ >= 0 && now - previous_time_ < kMinInterval) return std::optional<GpmMetrics>{};
  const int next = previous_ == 0 ? 1 : 0;
  GPUSCOPE_RETURN_IF_ERROR(take(buffers_[next]));
  const int previous = previous_;
  const auto previous_time = previous_time_;
  previous_ = next;
  previous_time_ = now;
  if (previous < 0) return std::optional<GpmMetrics>{};

  nvmlGpmMetricsGet_t request{};
  request.version = NVML_GPM_METRICS_GET_VERSION;
  request.numMetrics = static_cast<unsigned>(kMetrics.size());
  request.sample1 = buffers_[previous];
  request.sample2 = buffers_[next];
  for (std::size_t i = 0; i < kMetrics.size(); ++i) {
    request.metrics[i].metricId = kMetrics[i];
  }
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlGpmMetricsGet, &request));
  GpmMetrics metrics;
  metrics.interval_seconds = std::chrono::duration<double>(now - previous_time).count();
  metrics.sm_activity = as_fraction(request.metrics[0]);
  metrics.tensor_activity = as_fraction(request.metrics[1]);
  metrics.dram_activity = as_fraction(request.metrics[2]);
  metrics.graphics_activity = as_fraction(request.metrics[3]);
  metrics.sm_occupancy = as_fraction(request.metrics[4]);
  metrics.fp64_activity = as_fraction(request.metrics[5]);
  metrics.fp32_activity = as_fraction(request.metrics[6]);
  metrics.fp16_activity = as_fraction(request.metrics[7]);
  metrics.pcie_tx_bytes_per_s = as_bytes_per_s(request.metrics[8]);
  metrics.pcie_rx_bytes_per_s = as_bytes_per_s(request.metrics[9]);
  return std::optional<GpmMetrics>(metrics);
}

}  // namespace gpuscope::nvml
