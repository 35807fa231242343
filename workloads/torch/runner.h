// Runs one configuration end to end: checks that the mode can run on the device, builds the
// model, finds the batch (given, default or searched), warms up, optionally captures the step as
// a CUDA graph, times windows of steps, and reports every stage as JSON lines (json_protocol.h).
#pragma once

#include <atomic>

#include "json_protocol.h"
#include "run_config.h"

namespace gpuscope::workloads {

// Returns the exit status (TorchExit) and emits, in order: start, batch_probe lines (batch
// auto), a window line per timed window, then result; or skipped / error instead of whatever
// could not be done. Never throws: LibTorch's errors become `error` lines, an out-of-memory
// error a `skipped` line. When `stop` becomes true the run ends after the current window with a
// partial result. Does not emit `done` (the caller owns the process's last line).
int run_workload(const RunConfig& config, const LineSink& emit,
                 const std::atomic<bool>* stop = nullptr);

}  // namespace gpuscope::workloads
