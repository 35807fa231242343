// The last known value of every metric per GPU: what the Prometheus endpoint, the live view and
// the per-second lines show. Readings taken at slower cadences (processes, fan, GPM) stay until
// replaced. Not thread-safe: its users hold their own lock.
#pragma once

#include <optional>
#include <vector>

#include "gpuscope/telemetry.h"

namespace gpuscope::telemetry::detail {

struct LatestGpu {
  SampledGpu identity;
  MetricValues values;
  std::optional<double> t_s;  // of the last sample
  bool lost = false;
  std::vector<ProcessSample> processes;
};

class Latest {
 public:
  explicit Latest(const std::vector<SampledGpu>& gpus);
  void add(const Tick& tick);
  const std::vector<LatestGpu>& gpus() const { return gpus_; }

 private:
  std::vector<LatestGpu> gpus_;
};

}  // namespace gpuscope::telemetry::detail
