#include "report/downsample.h"

#include <algorithm>
#include <cmath>

namespace gpuscope::report::detail {

std::vector<std::size_t> downsample_indices(std::span<const double> x, std::span<const double> y,
                                            std::size_t max_points) {
  std::size_t n = std::min(x.size(), y.size());
  std::vector<std::size_t> kept;
  if (n <= max_points || max_points < 4) {
    kept.resize(n);
    for (std::size_t i = 0; i < n; ++i) kept[i] = i;
    return kept;
  }
  std::size_t buckets = max_points / 4;
  double x0 = x[0];
  double width = (x[n - 1] - x0) / static_cast<double>(buckets);
  auto bucket_of = [&](std::size_t i) {
    if (!(width > 0)) return std::size_t{0};
    auto b = static_cast<std::size_t>((x[i] - x0) / width);
    return std::min(b, buckets - 1);
  };
  kept.reserve(max_points);
  std::size_t i = 0;
  while (i < n) {
    std::size_t bucket = bucket_of(i);
    std::size_t first = i, last = i, low = n, high = n;
    for (; i < n && bucket_of(i) == bucket; ++i) {
      last = i;
      if (std::isnan(y[i])) continue;
      if (low == n || y[i] < y[low]) low = i;
      if (high == n || y[i] > y[high]) high = i;
    }
    std::size_t picks[] = {first, low, high, last};
    std::sort(std::begin(picks), std::end(picks));
    for (std::size_t p : picks) {
      if (p < n && (kept.empty() || kept.back() != p)) kept.push_back(p);
    }
  }
  return kept;
}

}  // namespace gpuscope::report::detail
