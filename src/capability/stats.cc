// The arithmetic the public header promises: FLOP counts, window summaries, overlap efficiency.
#include <algorithm>
#include <numeric>

#include "gpuscope/capability.h"

namespace gpuscope::capability {

double gemm_flop(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

WindowSummary summarize(const std::vector<double>& values) {
  WindowSummary summary;
  if (values.empty()) return summary;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t count = sorted.size();
  summary.count = static_cast<int>(count);
  summary.min = sorted.front();
  summary.max = sorted.back();
  summary.median =
      count % 2 == 1 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
  summary.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(count);
  return summary;
}

double OverlapResult::efficiency() const {
  const double shorter = std::min(copy_seconds, compute_seconds);
  if (shorter <= 0) return 0;
  return (copy_seconds + compute_seconds - both_seconds) / shorter;
}

}  // namespace gpuscope::capability
