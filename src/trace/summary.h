// The summary of a trace window, per step and overall: how busy the GPU was, what its kernels
// did, how long it sat idle between them, what was copied and how, how often the host waited,
// how many launches a step took, how long the program waited for data, and where CPU went.
//
// Steps come from marks (the shim's "gpuscope.step" after every optimizer step, or a user's
// NVTX range named with --step-range), else from the period of the kernel sequence
// (step_period.h); with neither, the window is summarized as a whole and `steps` is empty.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace/thread_cpu.h"
#include "trace/timeline.h"

namespace gpuscope::trace::detail {

enum class StepSource { none, marks, range, kernel_period };
const char* step_source_name(StepSource source);

struct CopyStats {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
};

struct StepStats {
  std::int64_t start_ns = 0, end_ns = 0;  // its bounds as the host passed them
  // From the end of the previous step's GPU work to the end of its own (each bound passed by the
  // host and, when later, by the GPU work launched before it): a host far ahead of its GPU
  // passes its bounds faster than its GPU runs the steps.
  double wall_s = 0;
  double gpu_busy_s = 0;   // union of kernels, copies and memsets on the GPU(s), within the step
  double data_wait_s = 0;  // the main process waiting for the next batch
  double sync_s = 0;       // host blocked on the device
  std::uint64_t syncs = 0;
  std::uint64_t kernels = 0;
  double kernel_s = 0;  // summed kernel durations (streams may overlap)
  std::uint64_t copies = 0;
  std::uint64_t copy_bytes = 0;
  std::uint64_t pageable_copies = 0;
};

struct KernelTime {
  std::string kind;       // kernel_kind_name
  std::string precision;  // math_precision_name ("unknown" for non-matrix kernels)
  bool tensor_cores = false;
  std::uint64_t count = 0;
  double seconds = 0;
};

// GPU idle time between consecutive activities on a device, by gap length.
struct IdleBucket {
  std::string label;   // "<10us", "10us-100us", "100us-1ms", "1ms-10ms", ">=10ms"
  double upper_s = 0;  // exclusive upper bound (infinity for the last)
  std::uint64_t gaps = 0;
  double seconds = 0;
};

struct TopKernel {
  std::string name;
  std::uint64_t count = 0;
  double seconds = 0;
};

struct TraceSummary {
  double window_s = 0;  // the span analysed: with steps, from their first bound to their last
  StepSource step_source = StepSource::none;
  // The steps inside the trace window, each with its breakdown; step k of `steps` is step
  // `first_traced_step` + k of the run.
  std::vector<StepStats> steps;
  std::size_t first_traced_step = 0;
  // The first step CUPTI recorded: before first_traced_step when the window opened on time and
  // the program marked its first steps later (warm-up inside the recording, neither traced nor
  // untraced).
  std::size_t first_recorded_step = 0;
  std::optional<double> step_median_s, step_p10_s, step_p90_s;
  // Every step the marks bound, traced or not (marks cost next to nothing, so the untraced
  // steps show what tracing cost and how the run went before and after the window).
  std::vector<double> all_step_s;

  double gpu_busy_s = 0;
  double gpu_busy_share = 0;  // of the window (of the steps' span when there are steps)
  std::uint64_t kernels = 0;
  double kernel_s = 0;
  double mean_kernel_s = 0;
  std::vector<KernelTime> kernel_time;  // by kind, precision and tensor-core use; most first
  std::vector<TopKernel> top_kernels;   // the 10 longest in total
  std::vector<IdleBucket> idle;
  std::map<std::string, CopyStats>
      copies;  // "host_to_device pageable", "device_to_host pinned", ...
  std::uint64_t syncs = 0;
  double sync_s = 0;
  bool syncs_recorded = true;  // false: a light trace, `syncs` counts nothing
  double data_wait_s = 0;
  std::uint64_t graph_kernels = 0;  // kernels launched from CUDA graphs
  // Communication between GPUs: collective kernels (NCCL) and copies from one GPU to another
  // (peer copies: a copy-engine all-reduce, a model split across GPUs, tensor.to("cuda:1")).
  // How many were launched in the window and their time, and the part of the GPU's span when
  // they ran with no other GPU work beside them (exposed: the step waits for them; with several
  // ranks on NCCL this includes waiting for the slowest, which a copy engine's wait does not
  // show: it runs nothing while it waits).
  std::uint64_t communication_kernels = 0, communication_copies = 0;
  double communication_s = 0, communication_exposed_s = 0;
  // Seconds by collective_of(), "peer_copy" for the peer copies.
  std::map<std::string, double> communication_by_op;
  std::map<std::string, double> cpu_s_by_role;  // "main", "other", "descendant"
  std::vector<ThreadUse> threads;               // most CPU first
  std::vector<int> devices;                     // GPUs with activity
  std::map<int, double> device_busy_s;          // each GPU's busy time, over the same span
};

struct SummaryOptions {
  std::string step_mark = "gpuscope.step";
  std::optional<std::string> step_range;  // a user's NVTX range that spans one step
};

TraceSummary summarize(const Timeline& timeline, const std::vector<ThreadUse>& threads,
                       const SummaryOptions& options);

}  // namespace gpuscope::trace::detail
