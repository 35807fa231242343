// The progress line: which row runs, i/N, elapsed, and the time left, estimated per row and
// corrected by how long the finished rows really took.
#pragma once

#include <string>
#include <vector>

#include "gpuscope/bench.h"
#include "gpuscope/clock.h"

namespace gpuscope::bench::detail {

// A row's expected seconds before anything ran: process start plus its steps, by task.
double prior_seconds(const RowSpec& row);
// One guard run's expected seconds.
inline constexpr double kGuardPriorS = 10;

class Progress {
 public:
  explicit Progress(std::vector<double> priors) : priors_(std::move(priors)) {}
  // Row `index` finished after `seconds`.
  void finished(std::size_t index, double seconds);
  // Seconds left for rows index..N-1: their priors, scaled by measured/prior of those done.
  double remaining_s(std::size_t index) const;
  // "bench [3/23] vit_b16 train fp32 | 1m02s elapsed, ~4m10s left"
  std::string line(std::size_t index, const std::string& label, double elapsed_s) const;

 private:
  std::vector<double> priors_;
  double done_prior_ = 0, done_actual_ = 0;
};

// "45s", "4m10s", "1h02m".
inline std::string format_duration(double seconds) {
  return gpuscope::format_duration(seconds, DurationStyle::compact);
}

}  // namespace gpuscope::bench::detail
