// gpuscope trace [-o DIR] [--skip-steps N] [--skip S] [--steps N] [--duration S]
//                [--step-range NAME] [--no-shim] [--light] [--json] [--store FILE] [--gpu ...] --
//                CMD ARGS...
// gpuscope trace --analyse DIR [--step-range NAME] [--json] [--store FILE]
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>
#include <iostream>

#include "commands.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/nvml.h"
#include "gpuscope/trace.h"
#include "store_option.h"
#include "trace_run_args.h"

namespace gpuscope::cli {
namespace {

struct TraceArgs {
  trace::TraceOptions options;
  TraceRunArgs run;
  std::string analyse, store;
};

int command_exit_code(const telemetry::MonitorResult& r) {
  if (!r.command) return kExitOk;
  const ProcessExit& e = r.command->exit;
  if (e.term_signal) return 128 + *e.term_signal;
  return e.exit_code.value_or(kExitError);
}

int run_analyse(const TraceArgs& a) {
  std::optional<std::string> range;
  if (!a.run.step_range.empty()) range = a.run.step_range;
  auto store = StoreOption::open(a.store);
  if (!store.ok()) return report_error(store.status());
  const double started = unix_now_s();
  auto summary = trace::analyse_trace_dir(a.analyse, range);
  if (!summary.ok()) return report_error(summary.status());
  if (Status stored = store->record(*summary, started, unix_now_s()); !stored.ok()) {
    return report_error(stored);
  }
  if (a.run.json) {
    std::cout << summary->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    trace::TraceRun run;
    run.out_dir = a.analyse;
    run.summary = *summary;
    run.notes = summary->value("notes", std::vector<std::string>{});
    run.processes_traced = summary->value("processes", nlohmann::json::array()).size();
    trace::print_trace(run, std::cout);
  }
  return kExitOk;
}

int run_trace_command(TraceArgs a) {
  if (!a.analyse.empty()) return run_analyse(a);
  if (a.options.command.empty()) {
    std::cerr
        << "gpuscope: error: trace needs a command: gpuscope trace [options] -- CMD ARGS...\n";
    return kExitUsage;
  }
  if (auto exit = prepare_trace_run(a.options, a.run)) {
    return *exit;
  }

  // A store that cannot be written is refused before the command starts.
  auto store = StoreOption::open(a.store);
  if (!store.ok()) return report_error(store.status());
  auto session = nvml::Session::open();
  if (!session.ok()) return report_error(session.status());
  const double started = unix_now_s();
  auto run = trace::run_trace(**session, a.options, std::cout, std::cerr);
  if (!run.ok()) return report_error(run.status());
  if (Status stored = store->record(run->summary, started, unix_now_s()); !stored.ok()) {
    return report_error(stored);
  }
  if (a.run.json) {
    std::cout << run->summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    // The command's stdout is its own: the summary goes to stderr, as `time` does.
    trace::print_trace(*run, std::cerr);
  }
  return command_exit_code(run->monitor);
}

}  // namespace

void add_trace_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<TraceArgs>();
  args->run.command_name = "trace";
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "See inside a CUDA program without changing it: kernels, copies, syncs, NVTX ranges, steps "
      "and host threads on one timeline (trace.json for ui.perfetto.dev), with a per-step summary");
  add_trace_output_options(*cmd, args->run, "Run folder",
                           "Print summary.json to stdout (the command's to stderr)");
  add_trace_run_options(*cmd, args->options, args->run);
  cmd->add_option("--store", args->store,
                  "Record the summary and each step into this SQLite results store (a 'trace' "
                  "run; `gpuscope report` draws it)");
  cmd->add_option("--analyse", args->analyse, "Analyse this trace folder again; runs nothing");
  cmd->add_option("command", args->options.command, "-- CMD ARGS...: the program to trace")
      ->take_all();
  cmd->callback([&runner, args] { runner = [args] { return run_trace_command(*args); }; });
}

}  // namespace gpuscope::cli
