// Readings that change in steps, and the exact integrals the fake derives from them (energy,
// 1 s average power, time spent throttled, GPM means).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace gpuscope::fake_nvml {

// A value that changes only at given times: value(t) is the value of the last point at or
// before t. Before the first point the first value holds, so a non-empty series is defined for
// every t and its integrals need no special case for a timeline that starts after t = 0.
template <class T>
class Steps {
 public:
  // REQUIRES: t is greater than the time of every point added before.
  void add(double t, T value) {
    times_.push_back(t);
    values_.push_back(std::move(value));
  }

  bool empty() const { return times_.empty(); }

  // REQUIRES: !empty().
  const T& at(double t) const { return values_[index_at(t)]; }

  // When the step in force at `t` began (the first point's time for t before it).
  // REQUIRES: !empty().
  double step_start(double t) const { return times_[index_at(t)]; }

  // The integral over [a, b] of f(value(tau)) dtau, exact for a step function.
  // REQUIRES: !empty(), a <= b.
  template <class F>
  double integral(double a, double b, F f) const {
    constexpr double kInfinity = std::numeric_limits<double>::infinity();
    double sum = 0.0;
    for (std::size_t i = 0; i < times_.size(); ++i) {
      const double begin = i == 0 ? -kInfinity : times_[i];
      const double end = i + 1 < times_.size() ? times_[i + 1] : kInfinity;
      const double overlap = std::min(b, end) - std::max(a, begin);
      if (overlap > 0.0) sum += static_cast<double>(f(values_[i])) * overlap;
    }
    return sum;
  }

 private:
  std::size_t index_at(double t) const {
    const auto after = std::upper_bound(times_.begin(), times_.end(), t);
    return after == times_.begin() ? 0 : static_cast<std::size_t>(after - times_.begin()) - 1;
  }

  std::vector<double> times_;
  std::vector<T> values_;
};

using StepSeries = Steps<double>;

// The integral of the series itself over [a, b]. REQUIRES: !series.empty(), a <= b.
inline double integral(const StepSeries& series, double a, double b) {
  return series.integral(a, b, [](double v) { return v; });
}

// The time-weighted mean over [a, b]; the value at a when the interval is empty.
// REQUIRES: !series.empty(), a <= b.
inline double mean(const StepSeries& series, double a, double b) {
  return b > a ? integral(series, a, b) / (b - a) : series.at(a);
}

}  // namespace gpuscope::fake_nvml
