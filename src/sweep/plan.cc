// Which limits (or SM clock locks) a sweep visits: the coarse plan, then the points that bracket
// the knees.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuscope/analysis.h"
#include "gpuscope/sweep.h"

namespace gpuscope::sweep {

Result<std::vector<double>> plan_limits(double min_w, double max_w,
                                        const std::optional<LimitRange>& range) {
  if (!(min_w > 0) || !(max_w >= min_w)) {
    return Status(Code::invalid_argument, "the GPU reports no usable power-limit range");
  }
  double high = max_w, low = min_w, step = std::round(0.05 * max_w);
  if (range) {
    if (!(range->step_w > 0)) {
      return Status(Code::invalid_argument, "--limits needs a positive step (FROM:TO:STEP)");
    }
    high = std::min(max_w, std::max(range->from_w, range->to_w));
    low = std::max(min_w, std::min(range->from_w, range->to_w));
    step = range->step_w;
    if (high < low) {
      return Status(Code::invalid_argument, "--limits lies outside the GPU's power-limit range (" +
                                                std::to_string(static_cast<int>(min_w)) + "-" +
                                                std::to_string(static_cast<int>(max_w)) + " W)");
    }
  }
  step = std::max(step, 1.0);
  std::vector<double> plan;
  for (double limit = high; limit > low + 0.5; limit -= step) plan.push_back(limit);
  plan.push_back(low);
  return plan;
}

Result<std::vector<double>> plan_clocks(const std::vector<unsigned>& supported_mhz,
                                        const std::optional<LimitRange>& range) {
  if (supported_mhz.empty()) {
    return Status(Code::not_supported, "the GPU lists no SM clocks that a lock may name");
  }
  // Iterators, not a structured binding: clang before 16 cannot capture one in a lambda.
  const auto extremes = std::minmax_element(supported_mhz.begin(), supported_mhz.end());
  const auto lowest = extremes.first, highest = extremes.second;
  double high = *highest, low = std::max<double>(*lowest, std::round(0.4 * *highest));
  double step = std::round(0.05 * *highest);
  if (range) {
    if (!(range->step_w > 0)) {
      return Status(Code::invalid_argument, "--limits needs a positive step (FROM:TO:STEP)");
    }
    high = std::min<double>(*highest, std::max(range->from_w, range->to_w));
    low = std::max<double>(*lowest, std::min(range->from_w, range->to_w));
    step = range->step_w;
    if (high < low) {
      return Status(Code::invalid_argument,
                    fmt::format("--limits lies outside the GPU's lockable SM clocks ({}-{} MHz)",
                                *lowest, *highest));
    }
  }
  step = std::max(step, 1.0);
  // The supported clock nearest to `mhz` (the higher one of two as near).
  auto snap = [&](double mhz) {
    unsigned best = *highest;
    for (unsigned c : supported_mhz) {
      if (std::abs(c - mhz) < std::abs(best - mhz) ||
          (std::abs(c - mhz) == std::abs(best - mhz) && c > best)) {
        best = c;
      }
    }
    return static_cast<double>(best);
  };
  std::vector<double> plan;
  auto add = [&](double mhz) {
    const double clock = snap(mhz);
    if (plan.empty() || clock < plan.back()) plan.push_back(clock);
  };
  for (double mhz = high; mhz > low + 0.5; mhz -= step) add(mhz);
  add(low);
  return plan;
}

std::vector<double> refine_limits(const std::vector<Point>& points,
                                  const std::vector<double>& fractions, double resolution_w,
                                  const std::function<double(double)>& snap) {
  std::vector<analysis::SweepPoint> measured;
  for (const Point& p : points) {
    if (!p.skipped) measured.push_back({p.value, p.samples_per_second});
  }
  std::sort(measured.begin(), measured.end(),
            [](const auto& a, const auto& b) { return a.power_limit_w < b.power_limit_w; });
  std::vector<double> extra;
  for (double fraction : fractions) {
    const auto knee = analysis::find_knee(measured, fraction);
    if (!knee || knee->at_lowest_limit) continue;
    // The measured limits on either side of the knee.
    const auto above =
        std::lower_bound(measured.begin(), measured.end(), knee->power_limit_w,
                         [](const auto& p, double w) { return p.power_limit_w < w; });
    if (above == measured.begin() || above == measured.end()) continue;
    const double hi = above->power_limit_w;
    const double lo = std::prev(above)->power_limit_w;
    if (hi - lo <= resolution_w) continue;
    const double mid = snap ? snap((hi + lo) / 2) : std::round((hi + lo) / 2);
    if (mid <= lo || mid >= hi) continue;
    const bool known = std::any_of(points.begin(), points.end(),
                                   [&](const Point& p) { return std::abs(p.value - mid) < 0.5; });
    const bool planned =
        std::any_of(extra.begin(), extra.end(), [&](double w) { return std::abs(w - mid) < 0.5; });
    if (!known && !planned) extra.push_back(mid);
  }
  std::sort(extra.rbegin(), extra.rend());
  return extra;
}

}  // namespace gpuscope::sweep
