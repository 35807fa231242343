#include "trace_run_args.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

#include "commands.h"
#include "validators.h"

namespace gpuscope::cli {

void add_trace_output_options(CLI::App& cmd, TraceRunArgs& args, std::string_view folder,
                              const std::string& json_help) {
  cmd.add_option(
      "-o,--output", args.out_dir,
      fmt::format("{} to create (default: {}-YYYYMMDD-HHMMSS)", folder, args.command_name));
  cmd.add_flag("--json", args.json, json_help);
}

void add_trace_run_options(CLI::App& cmd, trace::TraceOptions& options, TraceRunArgs& args) {
  cmd.add_option("--skip-steps", options.skip_steps,
                 "Warm-up: open the trace window after this many steps (default 10)")
      ->check(CLI::Range(0, 100'000'000));
  cmd.add_option("--skip", options.skip_s,
                 "Warm-up in seconds, for programs that mark no steps (default 20)")
      ->check(CLI::Range(0.0, 7.0 * 24 * 3600));
  cmd.add_option("--steps", options.steps, "Steps to trace (default 50)")
      ->check(CLI::Range(1, 100'000'000));
  cmd.add_option("--duration", args.duration_s,
                 "Seconds to trace when no steps are marked (default 10); 0: the whole run")
      ->check(CLI::Range(0.0, 7.0 * 24 * 3600));
  cmd.add_option("--step-range", args.step_range,
                 "An NVTX range of the program that spans one step (instead of optimizer steps)");
  cmd.add_flag("--no-shim", args.no_shim,
               "Do not put the Python step shim on PYTHONPATH (no step marks from torch.optim, "
               "no data waits)");
  cmd.add_flag("--light", options.light,
               "Record kernels, copies and memsets only, not synchronizations or CUDA calls: "
               "a smaller cost for a launch-bound program");
  // The whole value goes to the selector rule (target.h), as monitor's --gpu.
  cmd.add_option("--gpu", options.gpus, "Sample only these GPUs: NVML indices or UUIDs")
      ->check(gpu_selector_check());
  cmd.add_option("--interval", options.interval_ms, "NVML sampling interval in ms")
      ->check(CLI::Range(20, 60'000));
  cmd.add_option("--max-events", options.max_trace_events,
                 "Cap on trace.json's events (the rest are counted, not written)")
      ->check(CLI::Range(1000, 100'000'000));
}

std::optional<int> prepare_trace_run(trace::TraceOptions& options, const TraceRunArgs& args) {
  if (auto refused = refuse_unstartable(options.command)) return refused;
  if (args.duration_s == 0) {
    options.whole_run = true;
  } else {
    options.duration_s = args.duration_s;
  }
  options.out_dir = !args.out_dir.empty() ? args.out_dir
                                          : fmt::format("{}-{:%Y%m%d-%H%M%S}", args.command_name,
                                                        fmt::localtime(std::time(nullptr)));
  if (!args.step_range.empty()) options.step_range = args.step_range;
  options.shim = !args.no_shim;
  options.command_stdout_to_err = args.json;
  return std::nullopt;
}

}  // namespace gpuscope::cli
