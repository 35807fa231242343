#include "trace_run_args.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>
#include <iostream>

#include "gpuscope/exit_codes.h"
#include "gpuscope/monitor.h"

namespace gpuscope::cli {

std::optional<int> prepare_trace_run(trace::TraceOptions& options, const TraceRunArgs& args,
                                     std::string_view default_prefix) {
  Status runnable = telemetry::check_command(options.command);
  if (!runnable.ok()) {
    std::cerr << "gpuscope: error: " << runnable.message() << '\n';
    return runnable.code() == Code::not_found ? kExitCommandNotFound : kExitCommandNotExecutable;
  }
  if (args.duration_s == 0) {
    options.whole_run = true;
  } else {
    options.duration_s = args.duration_s;
  }
  options.out_dir = !args.out_dir.empty() ? args.out_dir
                                          : fmt::format("{}-{:%Y%m%d-%H%M%S}", default_prefix,
                                                        fmt::localtime(std::time(nullptr)));
  if (!args.step_range.empty()) options.step_range = args.step_range;
  options.shim = !args.no_shim;
  options.command_stdout_to_err = args.json;
  return std::nullopt;
}

}  // namespace gpuscope::cli
