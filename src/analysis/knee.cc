#include "gpuscope/analysis.h"

#include <algorithm>

namespace gpuscope::analysis {

std::optional<Knee> find_knee(std::vector<SweepPoint> points, double fraction) {
  std::sort(points.begin(), points.end(), [](const SweepPoint& a, const SweepPoint& b) {
    return a.power_limit_w < b.power_limit_w;
  });
  double best = 0;
  for (const SweepPoint& p : points) best = std::max(best, p.throughput);
  if (points.empty() || !(best > 0)) return std::nullopt;
  double target = fraction * best;
  if (points.front().throughput >= target) {
    return Knee{fraction, points.front().power_limit_w, true};
  }
  for (std::size_t i = 1; i < points.size(); ++i) {
    const SweepPoint& lo = points[i - 1];
    const SweepPoint& hi = points[i];
    if (hi.throughput < target) continue;
    double rise = hi.throughput - lo.throughput;  // > 0: lo is below target, hi at or above
    double limit =
        lo.power_limit_w + (target - lo.throughput) / rise * (hi.power_limit_w - lo.power_limit_w);
    return Knee{fraction, limit, false};
  }
  return std::nullopt;  // unreachable: the best point reaches every fraction <= 1
}

}  // namespace gpuscope::analysis
