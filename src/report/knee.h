// Knees of a power-limit sweep: the lowest power limit that still gives a fraction (80, 90,
// 95 %) of the best throughput — the numbers seeds/000 read off its charts by hand.
#pragma once

#include <optional>
#include <vector>

namespace gpuscope::report::detail {

struct SweepPoint {
  double power_limit_w = 0;
  double throughput = 0;  // any rate (samples/s, FLOP/s): only ratios matter
};

struct Knee {
  double fraction = 0;       // of the best throughput, e.g. 0.9
  double power_limit_w = 0;  // the lowest limit that reaches it
  // true: already reached at the lowest limit measured, so the real knee may lie lower.
  bool at_lowest_limit = false;
};

// The lowest power limit at which the throughput reaches `fraction` of the sweep's best,
// interpolated linearly between the two measured limits around the first crossing (a sweep is
// noisy, not monotonic: the first crossing from below counts). nullopt when there are no points
// or no positive throughput. REQUIRES: 0 < fraction <= 1.
std::optional<Knee> find_knee(std::vector<SweepPoint> points, double fraction);

}  // namespace gpuscope::report::detail
