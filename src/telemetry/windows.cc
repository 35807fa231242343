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

}  // namespace

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
