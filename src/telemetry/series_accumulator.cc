#include "telemetry/series_accumulator.h"

#include <algorithm>

namespace gpuscope::telemetry::detail {
namespace {

double lerp(double ta, double va, double tb, double vb, double t) {
  if (tb <= ta) return vb;
  return va + (vb - va) * (t - ta) / (tb - ta);
}

}  // namespace

void SeriesAccumulator::add(const GpuSample& sample) {
  const double t = sample.t_s;
  const bool inside = t >= t0_ && t <= t1_;
  if (inside) {
    ++samples_;
    if (!first_t_) first_t_ = t;
    last_t_ = t;
  }
  for (const MetricInfo& info : metric_catalogue()) {
    const std::optional<double> v = sample.values.get(info.metric);
    if (!v) continue;
    Series& s = series_[static_cast<std::size_t>(info.metric)];
    if (inside) {
      s.peak = s.peak ? std::max(*s.peak, *v) : *v;
      if (!s.single) s.single = Point{t, *v};
    }
    switch (info.aggregation) {
      case Aggregation::interpolate:
        add_interpolated(s, t, *v);
        break;
      case Aggregation::interval:
        if (sample.gpm_interval_s) add_interval(s, t, *v, *sample.gpm_interval_s);
        break;
      case Aggregation::hold:
        break;
    }
  }
  if (auto mask = sample.values.get(Metric::clock_event_reasons)) {
    add_mask(t, static_cast<std::uint64_t>(*mask));
  }
}

void SeriesAccumulator::add_interpolated(Series& s, double t, double v) {
  if (s.previous && t > s.previous->t) {
    const Point a = *s.previous;
    const double c0 = std::max(a.t, t0_), c1 = std::min(t, t1_);
    if (c1 > c0) {
      const Point p0{c0, lerp(a.t, a.v, t, v, c0)};
      const Point p1{c1, lerp(a.t, a.v, t, v, c1)};
      s.integral += (p0.v + p1.v) / 2 * (c1 - c0);
      s.covered += c1 - c0;
      if (!s.first) s.first = p0;
      s.last = p1;
    }
  }
  s.previous = Point{t, v};
}

void SeriesAccumulator::add_interval(Series& s, double t, double v, double interval) {
  const double c0 = std::max(t - interval, t0_), c1 = std::min(t, t1_);
  if (c1 > c0) {
    s.integral += v * (c1 - c0);
    s.covered += c1 - c0;
  }
  s.previous = Point{t, v};
}

void SeriesAccumulator::add_mask(double t, std::uint64_t mask) {
  if (mask_previous_ && t > mask_previous_->t) {
    const double c0 = std::max(mask_previous_->t, t0_), c1 = std::min(t, t1_);
    if (c1 > c0) {
      mask_covered_ += c1 - c0;
      const auto previous = static_cast<std::uint64_t>(mask_previous_->v);
      for (nvml::ThrottleReason reason : nvml::kThrottleReasons) {
        double& seconds = mask_seconds_[reason];
        if ((previous & nvml::throttle_reason_bit(reason)) != 0) seconds += c1 - c0;
      }
    }
  }
  mask_previous_ = Point{t, static_cast<double>(mask)};
}

std::optional<Covered> SeriesAccumulator::mean(Metric metric) const {
  const Series& s = series_[static_cast<std::size_t>(metric)];
  if (s.covered > 0) return Covered{s.integral / s.covered, s.covered};
  if (s.single) return Covered{s.single->v, 0};
  return std::nullopt;
}

std::optional<double> SeriesAccumulator::peak(Metric metric) const {
  return series_[static_cast<std::size_t>(metric)].peak;
}

std::optional<Covered> SeriesAccumulator::counter_change(Metric metric) const {
  const Series& s = series_[static_cast<std::size_t>(metric)];
  if (!s.first || !s.last) return std::nullopt;
  return Covered{s.last->v - s.first->v, s.last->t - s.first->t};
}

std::optional<Covered> SeriesAccumulator::integral(Metric metric) const {
  const Series& s = series_[static_cast<std::size_t>(metric)];
  if (s.covered <= 0) return std::nullopt;
  return Covered{s.integral, s.covered};
}

std::optional<Energy> SeriesAccumulator::energy() const {
  if (auto counter = counter_change(Metric::energy_j); counter && counter->seconds > 0) {
    return Energy{counter->value, counter->seconds, EnergySource::counter};
  }
  if (auto power = integral(Metric::power_w)) {
    return Energy{power->value, power->seconds, EnergySource::power_integral};
  }
  return std::nullopt;
}

std::map<nvml::ThrottleReason, ThrottleTime> SeriesAccumulator::throttle() const {
  std::map<nvml::ThrottleReason, ThrottleTime> out;
  for (nvml::ThrottleReason reason : nvml::kThrottleReasons) {
    if (auto metric = throttle_metric(reason)) {
      if (auto change = counter_change(*metric); change && change->seconds > 0) {
        out[reason] = ThrottleTime{std::max(0.0, change->value), true};
        continue;
      }
    }
    if (mask_covered_ > 0) {
      auto it = mask_seconds_.find(reason);
      out[reason] = ThrottleTime{it == mask_seconds_.end() ? 0.0 : it->second, false};
    }
  }
  return out;
}

}  // namespace gpuscope::telemetry::detail
