// One GPU's samples folded into integrals, peaks and counter changes over a window, as they
// arrive: the engine behind both the window functions (over recorded samples) and the
// monitor's summary (streamed, so memory does not grow with the session's length).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "gpuscope/telemetry.h"

namespace gpuscope::telemetry::detail {

class SeriesAccumulator {
 public:
  explicit SeriesAccumulator(double t0 = -std::numeric_limits<double>::infinity(),
                             double t1 = std::numeric_limits<double>::infinity())
      : t0_(t0), t1_(t1) {}

  // REQUIRES: samples of one GPU in time order.
  void add(const GpuSample& sample);

  std::size_t samples_in_window() const { return samples_; }
  std::optional<double> first_t() const { return first_t_; }
  std::optional<double> last_t() const { return last_t_; }

  // Time-weighted mean over the covered part of the window. A single sample in the window gives
  // its value with 0 seconds covered.
  std::optional<Covered> mean(Metric metric) const;
  std::optional<double> peak(Metric metric) const;
  // The change of a counter from the window's first covered instant to its last.
  std::optional<Covered> counter_change(Metric metric) const;
  std::optional<Covered> integral(Metric metric) const;
  std::optional<Energy> energy() const;
  std::map<nvml::ThrottleReason, ThrottleTime> throttle() const;

 private:
  struct Point {
    double t = 0, v = 0;
  };
  struct Series {
    std::optional<Point> previous;     // the last sample that had this metric
    std::optional<Point> first, last;  // covered edges (interpolated at the window's edges)
    std::optional<Point> single;       // a sample inside the window (for 0-length coverage)
    double integral = 0;
    double covered = 0;
    std::optional<double> peak;
  };
  void add_interpolated(Series& s, double t, double v);
  void add_interval(Series& s, double t, double v, double interval);
  void add_mask(double t, std::uint64_t mask);

  double t0_, t1_;
  std::array<Series, kMetricCount> series_{};
  std::size_t samples_ = 0;
  std::optional<double> first_t_, last_t_;
  // Clock-event masks, each holding until the next sample.
  std::optional<Point> mask_previous_;
  double mask_covered_ = 0;
  std::map<nvml::ThrottleReason, double> mask_seconds_;
};

}  // namespace gpuscope::telemetry::detail
