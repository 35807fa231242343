// trace.json: a trace window as Chrome Trace Event JSON (chrome_trace.h) that ui.perfetto.dev
// and chrome://tracing open.
//
// Tracks: a process "GPU N" per device with a track per stream (kernels, copies, memsets); per
// traced process a track per thread (API calls, synchronizations, NVTX marks) and beside each a
// track of its NVTX ranges (ranges need not nest inside API calls); a "steps" track in the
// observed process; counter tracks per GPU for the NVML readings given.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "trace/chrome_trace.h"
#include "trace/summary.h"
#include "trace/timeline.h"

namespace gpuscope::trace::detail {

// One NVML reading set of one GPU, e.g. {"sm_active": 0.42, "power_w": 512}.
struct CounterSample {
  std::int64_t at_ns = 0;
  int device = 0;
  std::map<std::string, double> values;
};

struct ExportOptions {
  ChromeTraceWriter::Limits limits;
  bool api_calls = true;  // runtime/driver API slices (the largest share of events)
  nlohmann::json metadata = nlohmann::json::object();  // command, window, what was dropped
};

struct ExportCounts {
  std::size_t written = 0;
  std::size_t dropped = 0;
};

ExportCounts export_chrome_trace(const Timeline& timeline, const TraceSummary& summary,
                                 const std::vector<CounterSample>& counters,
                                 const ExportOptions& options, std::ostream& out);

// Synthetic process ids of the GPU tracks (above any real PID: Linux's pid_max is at most 2^22).
inline constexpr std::int64_t kGpuTrackPid = 1LL << 30;
// A thread's NVTX ranges track: tid + kRangeTrackOffset.
inline constexpr std::int64_t kRangeTrackOffset = 1LL << 30;

}  // namespace gpuscope::trace::detail
