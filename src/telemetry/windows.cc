// Windows over recorded samples: thin wrappers over SeriesAccumulator, so a window measured by
// burn or bench and the monitor's summary compute energy and means the same way.
#include "gpuscope/telemetry.h"
#include "telemetry/series_accumulator.h"

namespace gpuscope::telemetry {
namespace {

detail::SeriesAccumulator fold(std::span<const GpuSample> samples, double t0, double t1) {
  detail::SeriesAccumulator acc(t0, t1);
  for (const GpuSample& s : samples) acc.add(s);
  return acc;
}

bool is_gpm(Metric metric) {
  return metric_info(metric).aggregation == Aggregation::interval;
}

}  // namespace

bool measured_per_instance(Metric metric) {
  return is_gpm(metric);
}

std::vector<GpuSample> instance_view(std::span<const GpuSample> samples, unsigned gpu_instance_id) {
  std::vector<GpuSample> view;
  view.reserve(samples.size());
  for (const GpuSample& s : samples) {
    GpuSample v = s;
    v.instances.clear();
    v.gpm_interval_s.reset();
    for (const MetricInfo& info : metric_catalogue()) {
      if (is_gpm(info.metric)) v.values.set(info.metric, std::nullopt);
    }
    for (const InstanceSample& instance : s.instances) {
      if (instance.gpu_instance_id != gpu_instance_id) continue;
      v.gpm_interval_s = instance.gpm_interval_s;
      for (const MetricInfo& info : metric_catalogue()) {
        if (is_gpm(info.metric)) v.values.set(info.metric, instance.values.get(info.metric));
      }
    }
    view.push_back(std::move(v));
  }
  return view;
}

std::optional<double> value_at(std::span<const GpuSample> samples, Metric metric, double t) {
  const GpuSample* before = nullptr;
  for (const GpuSample& s : samples) {
    if (!s.values.has(metric)) continue;
    if (s.t_s == t) return s.values.get(metric);
    if (s.t_s < t) {
      before = &s;
      continue;
    }
    if (before == nullptr) return std::nullopt;
    const double va = *before->values.get(metric), vb = *s.values.get(metric);
    return va + (vb - va) * (t - before->t_s) / (s.t_s - before->t_s);
  }
  return std::nullopt;
}

std::optional<Energy> energy_between(std::span<const GpuSample> samples, double t0, double t1) {
  return fold(samples, t0, t1).energy();
}

std::optional<Covered> mean_between(std::span<const GpuSample> samples, Metric metric, double t0,
                                    double t1) {
  return fold(samples, t0, t1).mean(metric);
}

std::optional<double> peak_between(std::span<const GpuSample> samples, Metric metric, double t0,
                                   double t1) {
  return fold(samples, t0, t1).peak(metric);
}

std::map<nvml::ThrottleReason, ThrottleTime> throttle_between(std::span<const GpuSample> samples,
                                                              double t0, double t1) {
  return fold(samples, t0, t1).throttle();
}

}  // namespace gpuscope::telemetry
