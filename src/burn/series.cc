#include "burn/series.h"

#include <algorithm>
#include <utility>

namespace gpuscope::burn::detail {
namespace {

using Points = std::vector<std::pair<double, double>>;  // (t, value)

Points points_of(const std::vector<TelemetrySample>& samples, const Reading& reading) {
  Points points;
  for (const TelemetrySample& s : samples) {
    if (const std::optional<double> v = reading(s)) points.emplace_back(s.t, *v);
  }
  return points;
}

std::optional<double> interpolate(const Points& points, double t) {
  if (points.empty() || t < points.front().first || t > points.back().first) return std::nullopt;
  const auto after = std::lower_bound(points.begin(), points.end(), t,
                                      [](const auto& p, double x) { return p.first < x; });
  if (after->first == t || after == points.begin()) return after->second;
  const auto before = after - 1;
  const double w = (t - before->first) / (after->first - before->first);
  return before->second + w * (after->second - before->second);
}

// The span cut to what the points cover; nullopt when nothing is left.
std::optional<Span> clip(const Points& points, Span span) {
  if (points.size() < 2) return std::nullopt;
  Span clipped{std::max(span.start, points.front().first), std::min(span.end, points.back().first)};
  if (clipped.end <= clipped.start) return std::nullopt;
  return clipped;
}

}  // namespace

std::optional<double> value_at(const std::vector<TelemetrySample>& samples, double t,
                               const Reading& reading) {
  return interpolate(points_of(samples, reading), t);
}

std::optional<Covered> counter_change(const std::vector<TelemetrySample>& samples, Span span,
                                      const Reading& counter) {
  const Points points = points_of(samples, counter);
  const std::optional<Span> clipped = clip(points, span);
  if (!clipped) return std::nullopt;
  return Covered{*interpolate(points, clipped->end) - *interpolate(points, clipped->start),
                 clipped->seconds()};
}

std::optional<Covered> integrate(const std::vector<TelemetrySample>& samples, Span span,
                                 const Reading& reading) {
  const Points points = points_of(samples, reading);
  const std::optional<Span> clipped = clip(points, span);
  if (!clipped) return std::nullopt;
  double total = 0;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const double a = std::max(points[i].first, clipped->start);
    const double b = std::min(points[i + 1].first, clipped->end);
    if (b <= a) continue;
    total += 0.5 * (*interpolate(points, a) + *interpolate(points, b)) * (b - a);
  }
  return Covered{total, clipped->seconds()};
}

std::optional<double> max_over(const std::vector<TelemetrySample>& samples, Span span,
                               const Reading& reading) {
  std::optional<double> best;
  for (const TelemetrySample& s : samples) {
    if (s.t < span.start || s.t > span.end) continue;
    if (const std::optional<double> v = reading(s); v && (!best || *v > *best)) best = v;
  }
  if (best) return best;
  return value_at(samples, 0.5 * (span.start + span.end), reading);
}

std::optional<double> mean_over(const std::vector<TelemetrySample>& samples, Span span,
                                const Reading& reading) {
  if (const std::optional<Covered> area = integrate(samples, span, reading);
      area && area->seconds > 0) {
    return area->value / area->seconds;
  }
  return value_at(samples, 0.5 * (span.start + span.end), reading);
}

std::optional<Covered> seconds_with_bit(const std::vector<TelemetrySample>& samples, Span span,
                                        std::uint64_t bit) {
  std::vector<std::pair<double, bool>> steps;
  for (const TelemetrySample& s : samples) {
    if (s.clock_event_reasons) steps.emplace_back(s.t, (*s.clock_event_reasons & bit) != 0);
  }
  if (steps.size() < 2) return std::nullopt;
  Covered covered;
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    const double a = std::max(steps[i].first, span.start);
    const double b = std::min(steps[i + 1].first, span.end);
    if (b <= a) continue;
    covered.seconds += b - a;
    if (steps[i].second) covered.value += b - a;
  }
  if (covered.seconds <= 0) return std::nullopt;
  return covered;
}

std::optional<double> gpm_mean(const std::vector<GpmInterval>& intervals, Span span,
                               std::optional<double> nvml::GpmMetrics::*metric) {
  double weighted = 0, weight = 0;
  for (const GpmInterval& interval : intervals) {
    const std::optional<double>& value = interval.metrics.*metric;
    const double overlap = std::min(interval.t1, span.end) - std::max(interval.t0, span.start);
    if (!value || overlap <= 0) continue;
    weighted += *value * overlap;
    weight += overlap;
  }
  if (weight <= 0) return std::nullopt;
  return weighted / weight;
}

}  // namespace gpuscope::burn::detail
