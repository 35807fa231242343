// What a run can leave beside its result to explain it: a kernel trace of a few extra steps
// after the timed windows (--trace, LibTorch's Kineto profiler, the file PyTorch's
// torch.profiler writes: open it in https://ui.perfetto.dev) and the CUDA caching allocator's
// history from before the model is placed (--memory-snapshot, the pickle
// torch.cuda.memory._dump_snapshot writes: open it in https://pytorch.org/memory_viz, or read it
// with bench/analysis/memory_peak.py). Neither touches the timed steps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "device.h"

namespace gpuscope::workloads {

// Records every allocation and free of the CUDA caching allocator from construction (sizes,
// addresses, streams and times; no stacks) until save(). CUDA only: see unavailable_reason.
class MemoryHistory {
 public:
  // Marked where the run resets its peak counters (after the warm-up, before any capture).
  static constexpr const char* kTimingAnnotation = "gpuscope-torch timing";

  // nullopt when the history can be recorded on `device`; otherwise why not.
  static std::optional<std::string> unavailable_reason(const DeviceInfo& device);

  MemoryHistory();
  ~MemoryHistory();  // stops recording
  MemoryHistory(const MemoryHistory&) = delete;
  MemoryHistory& operator=(const MemoryHistory&) = delete;

  // An annotation in the history at this moment (bench/analysis/memory_peak.py searches the
  // peak from the one named kTimingAnnotation).
  static void mark(const std::string& name);

  // Writes the snapshot (segments, blocks and the history) to `path`. Returns why it could not.
  std::optional<std::string> save(const std::string& path) const;
};

// The Kineto profiler over the steps run between construction and finish(): CPU operators, and
// on CUDA the kernels and memory copies, CUDA graph replays' kernels included.
class KernelTrace {
 public:
  explicit KernelTrace(const DeviceInfo& device);
  ~KernelTrace();  // stops the profiler if finish() was not called
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;

  // Stops the profiler and writes its Chrome-trace JSON to `path`. Returns why it could not.
  std::optional<std::string> finish(const std::string& path);

 private:
  bool active_ = false;
};

// Where a diagnostic file may be written: nullopt when `path`'s folder exists and is writable
// (checked before the run, so that a long run does not end without its trace).
std::optional<std::string> unwritable_reason(const std::string& path);

}  // namespace gpuscope::workloads
