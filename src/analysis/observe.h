// From a trace (the timeline and summary of src/trace, the NVML recording, the threads' CPU) to
// the numbers the diagnose rules read (observations.h), and the charts' data.
#pragma once

#include <sys/types.h>

#include <set>
#include <vector>

#include "analysis/observations.h"
#include "gpuscope/diagnose.h"
#include "gpuscope/monitor.h"
#include "gpuscope/trace.h"
#include "trace/summary.h"
#include "trace/timeline.h"

namespace gpuscope::analysis::detail {

// The NVML side of a trace folder: its recording, and which PIDs belong to the command.
struct TelemetryContext {
  std::optional<telemetry::Recording> recording;
  std::set<unsigned> command_pids;  // the record files' and the monitor's
  std::map<unsigned, std::set<unsigned>> command_pids_by_gpu;
  std::map<unsigned, double> command_memory_peak_by_gpu;  // from summary.json
  // CLOCK_MONOTONIC ns -> Unix seconds: unix = (mono_ns - origin_ns) / 1e9 + origin_unix_s.
  std::int64_t origin_ns = 0;
  double origin_unix_s = 0;
};

// The training loop: from the first to the last step mark of the main process (the analysed
// span when there are none). NVML's activities are read over it: a trace window of a few steps
// holds too few samples.
std::pair<std::int64_t, std::int64_t> steps_span(const trace::detail::Timeline& timeline,
                                                 const trace::detail::TraceSummary& summary,
                                                 const std::string& step_mark);

// Each GPU of the recording over [from_ns, to_ns] (the whole recording when the window holds
// fewer than three samples of it).
std::vector<GpuObservations> observe_gpus(const TelemetryContext& context, std::int64_t from_ns,
                                          std::int64_t to_ns);

// The median step before the trace window opened (the first, warm-up, left out): the step time
// without tracing's cost. Steps after the window are not used: on the H100 they stayed slower
// for a while after CUPTI was turned off. nullopt with fewer than three such steps.
std::optional<double> untraced_step_s(const trace::detail::Timeline& timeline,
                                      const std::string& step_mark);

// One process's observations, per step, with its GPU's telemetry when `gpu` is given; step_s
// is `untraced_step_s` when given (clamped between the GPU's busy time and the traced step).
Observations observe(const trace::detail::Timeline& timeline,
                     const trace::detail::TraceSummary& summary,
                     const std::optional<GpuObservations>& gpu,
                     std::optional<double> untraced_step_s);

// The span the summary analysed: its steps', else the window's, else what was recorded.
std::pair<std::int64_t, std::int64_t> analysed_span(const trace::detail::Timeline& timeline,
                                                    const trace::detail::TraceSummary& summary);

// The per-step breakdown, idle by gap length, and the first `steps` steps as a timeline.
void chart_data(const trace::detail::Timeline& timeline, const trace::detail::TraceSummary& summary,
                std::size_t steps, ProcessDiagnosis& out);

}  // namespace gpuscope::analysis::detail
