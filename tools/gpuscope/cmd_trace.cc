// gpuscope trace [-o DIR] [--skip-steps N] [--skip S] [--steps N] [--duration S]
//                [--step-range NAME] [--no-shim] [--json] [--store FILE] [--gpu ...] -- CMD ARGS...
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
#include "validators.h"

namespace gpuscope::cli {
namespace {

struct TraceArgs {
  trace::TraceOptions options;
  std::string out_dir, analyse, step_range, store;
  bool no_shim = false, json = false;
  double duration_s = 10;
};

int command_exit_code(const telemetry::MonitorResult& r) {
  if (!r.command) return kExitOk;
  const ProcessExit& e = r.command->exit;
  if (e.term_signal) return 128 + *e.term_signal;
  return e.exit_code.value_or(kExitError);
}

int run_analyse(const TraceArgs& a) {
  std::optional<std::string> range;
  if (!a.step_range.empty()) range = a.step_range;
  auto store = StoreOption::open(a.store);
  if (!store.ok()) return report_error(store.status());
  const double started = unix_now_s();
  auto summary = trace::analyse_trace_dir(a.analyse, range);
  if (!summary.ok()) return report_error(summary.status());
  if (Status stored = store->record(*summary, started, unix_now_s()); !stored.ok()) {
    return report_error(stored);
  }
  if (a.json) {
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
  if (auto exit = prepare_trace_run(
          a.options, {a.duration_s, a.out_dir, a.step_range, a.no_shim, a.json}, "trace")) {
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
  if (a.json) {
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
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "See inside a CUDA program without changing it: kernels, copies, syncs, NVTX ranges, steps "
      "and host threads on one timeline (trace.json for ui.perfetto.dev), with a per-step summary");
  cmd->add_option("-o,--output", args->out_dir,
                  "Run folder to create (default: trace-YYYYMMDD-HHMMSS)");
  cmd->add_option("--skip-steps", args->options.skip_steps,
                  "Warm-up: open the window after this many steps (default 10)")
      ->check(CLI::Range(0, 100'000'000));
  cmd->add_option("--skip", args->options.skip_s,
                  "Warm-up in seconds, for programs that mark no steps (default 20)")
      ->check(CLI::Range(0.0, 7.0 * 24 * 3600));
  cmd->add_option("--steps", args->options.steps, "Steps to record (default 50)")
      ->check(CLI::Range(1, 100'000'000));
  cmd->add_option("--duration", args->duration_s,
                  "Seconds to record when no steps are marked (default 10); 0: the whole run")
      ->check(CLI::Range(0.0, 7.0 * 24 * 3600));
  cmd->add_option("--step-range", args->step_range,
                  "An NVTX range of the program that spans one step (instead of optimizer steps)");
  cmd->add_flag("--no-shim", args->no_shim,
                "Do not put the Python step shim on PYTHONPATH (no step marks from torch.optim)");
  cmd->add_flag("--json", args->json, "Print summary.json to stdout (the command's to stderr)");
  cmd->add_option("--gpu", args->options.gpus, "Sample only these GPUs: NVML indices or UUIDs")
      ->check(gpu_selector_check());
  cmd->add_option("--interval", args->options.interval_ms, "NVML sampling interval in ms")
      ->check(CLI::Range(20, 60'000));
  cmd->add_option("--max-events", args->options.max_trace_events,
                  "Cap on trace.json's events (the rest are counted, not written)")
      ->check(CLI::Range(1000, 100'000'000));
  cmd->add_option("--store", args->store,
                  "Record the summary and each step into this SQLite results store (a 'trace' "
                  "run; `gpuscope report` draws it)");
  cmd->add_option("--analyse", args->analyse, "Analyse this trace folder again; runs nothing");
  cmd->add_option("command", args->options.command, "-- CMD ARGS...: the program to trace")
      ->take_all();
  cmd->callback([&runner, args] { runner = [args] { return run_trace_command(*args); }; });
}

}  // namespace gpuscope::cli
