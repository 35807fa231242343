// Step timing: timestamps taken on the device's own timeline (CUDA events on the current stream,
// recorded without synchronizing) or the host clock on the CPU, and order statistics of the
// resulting durations.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "device.h"

namespace gpuscope::workloads {

class StepClock {
 public:
  // REQUIRES: for a CUDA device, the stream that runs the steps is current when mark() is called.
  explicit StepClock(const DeviceInfo& device);
  ~StepClock();
  StepClock(const StepClock&) = delete;
  StepClock& operator=(const StepClock&) = delete;

  // Records a timestamp after the work queued so far; never synchronizes.
  void mark();
  // Waits for the last mark and returns the seconds between consecutive marks (one fewer than
  // the marks), then forgets the marks.
  std::vector<double> intervals_s();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Order statistics of a sample. Percentiles interpolate linearly between order statistics.
struct Summary {
  size_t count = 0;
  double median = 0, mean = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  // (p90 - p10) / median: the spread of step times relative to a typical step; 0 if median is 0.
  double relative_spread = 0;
};
Summary summarize(std::vector<double> values);
double percentile(const std::vector<double>& sorted_values, double fraction);

}  // namespace gpuscope::workloads
