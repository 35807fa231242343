// From one worker's stream, its exit and the telemetry of its GPU to a TargetResult: a row per
// planned precision, the memory and host-link rows, and the target's outcome.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "burn/worker_stream.h"
#include "gpuscope/burn.h"
#include "gpuscope/process.h"
#include "gpuscope/telemetry.h"

namespace gpuscope::burn::detail {

// Spans shorter than this give no energy: NVML's energy counter and power readings update a few
// times a second at best, so a shorter window would be mostly sensor lag.
inline constexpr double kMinEnergySeconds = 1.0;

// Everything known about one worker after it ended.
struct WorkerRun {
  WorkerStream stream;
  Status start_status;              // not ok: the worker never started
  std::optional<ProcessExit> exit;  // absent when it never started
  std::deque<std::string> stderr_tail;
};

// What the shared sampler saw of one target: its GPU's samples (for a MIG instance,
// telemetry::instance_view()'s: the instance's GPM, the GPU's other readings) in time order, and
// the readings that failed on that GPU.
struct TargetTelemetry {
  std::vector<telemetry::GpuSample> samples;
  std::vector<std::string> problems;
};

struct AggregateContext {
  std::vector<Precision> precisions;  // planned, in order
  bool interrupted = false;           // Ctrl-C reached the run
  int targets_on_gpu = 1;             // workers sharing this target's physical GPU (MIG)
};

// REQUIRES: `telemetry` is the target's, or null when it was not sampled.
TargetResult aggregate_target(const Target& target, const WorkerRun& run,
                              const TargetTelemetry* telemetry, const AggregateContext& context);

// The sustained rate: the median of the windows' rates (the mean of the middle two for an
// even count). REQUIRES: not empty.
double median(std::vector<double> values);

// Sets result.outcome and result.failure from the worker's stream and exit.
void decide_outcome(TargetResult& result, const WorkerRun& run, bool interrupted);

}  // namespace gpuscope::burn::detail
