// What `gpuscope trace -- CMD` and `gpuscope diagnose -- CMD` share before a trace runs: their
// options (the recording window, steps, shim, sampling), the command checked before anything
// starts (exit 127 when it is not found, 126 when it cannot be run, as a shell answers), the
// run folder.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "gpuscope/trace.h"

namespace gpuscope::cli {

struct TraceRunArgs {
  std::string command_name;  // "trace", "diagnose": the default run folder's prefix
  double duration_s = 10;    // 0: the whole run
  std::string out_dir;       // "": COMMAND_NAME-YYYYMMDD-HHMMSS
  std::string step_range;
  bool no_shim = false;
  bool json = false;  // the command's stdout goes to stderr, so that stdout is the JSON
};

// Registers -o/--output and --json on `cmd` (the command `args.command_name`), in each command's
// words: `folder` is what -o creates ("Run folder"), `json_help` what --json prints.
void add_trace_output_options(CLI::App& cmd, TraceRunArgs& args, std::string_view folder,
                              const std::string& json_help);

// Registers the options both commands take on `cmd`: --skip-steps, --skip, --steps, --duration,
// --step-range, --no-shim, --light, --gpu, --interval, --max-events.
void add_trace_run_options(CLI::App& cmd, trace::TraceOptions& options, TraceRunArgs& args);

// Fills `options` (whose command is set) from `args`; nullopt to go on, else the exit code to
// end with (the message already printed).
std::optional<int> prepare_trace_run(trace::TraceOptions& options, const TraceRunArgs& args);

}  // namespace gpuscope::cli
