// gpuscope monitor [--interval MS] [--csv F] [--jsonl F] [--store F] [--listen [ADDR:]PORT]
//                  [--tui|--no-tui] [--json] [--gpu N|UUID,...] [--duration S] [-- CMD ARGS...]
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/files.h"
#include "gpuscope/monitor.h"
#include "gpuscope/nvml.h"
#include "gpuscope/process.h"
#include "store_option.h"
#include "validators.h"

namespace gpuscope::cli {
namespace {

struct MonitorArgs {
  int interval_ms = 100;
  std::string csv, jsonl, store, listen;
  bool tui = false, no_tui = false, json = false, force = false;
  std::vector<std::string> gpus;
  double duration_s = 0;
  std::vector<std::string> command;
};

telemetry::View choose_view(const MonitorArgs& a) {
  if (a.json) return telemetry::View::none;
  if (a.tui) return telemetry::View::live;
  const bool terminal = isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0;
  if (!a.command.empty()) return telemetry::View::none;  // the terminal is the command's
  return terminal && !a.no_tui ? telemetry::View::live : telemetry::View::lines;
}

int exit_code(const telemetry::MonitorResult& r) {
  bool lost = false;
  for (const auto& g : r.summary.gpus) lost = lost || g.lost_at_s.has_value();
  int monitoring = kExitOk;
  if (lost) monitoring = kExitGpuLost;
  if (!r.sink_failures.empty()) monitoring = kExitError;
  if (!r.command) return monitoring;
  const int code = command_exit_code(r.command->exit);
  return code != 0 ? code : monitoring;
}

int run_monitor_command(const MonitorArgs& a) {
  Status paths =
      files::check_paths({files::output_path("--csv", a.csv, files::OutputKind::monitor_csv),
                          files::output_path("--jsonl", a.jsonl, files::OutputKind::monitor_jsonl),
                          files::store_path("--store", a.store)},
                         a.force);
  if (!paths.ok()) return report_error(paths);
  if (!a.command.empty()) {
    // A command that cannot be started is answered as a shell would (127 / 126), before any
    // sink is created. One the system refuses only at its start comes back as its outcome.
    if (auto refused = refuse_unstartable(a.command)) return *refused;
  }
  auto session = nvml::Session::open();
  if (!session.ok()) return report_error(session.status());

  telemetry::MonitorOptions o;
  o.sampler.interval = std::chrono::milliseconds(a.interval_ms);
  o.sampler.gpus = a.gpus;
  if (!a.csv.empty()) o.csv_path = a.csv;
  if (!a.jsonl.empty()) o.jsonl_path = a.jsonl;
  if (!a.store.empty()) o.store_path = a.store;
  if (!a.listen.empty()) o.listen = a.listen;
  if (a.duration_s > 0) o.duration_s = a.duration_s;
  o.command = a.command;
  o.command_line = command_line();
  o.command_stdout_to_err = a.json;  // stdout is the JSON document's alone
  o.view = choose_view(a);

  // Where the summary goes: a command's stdout belongs to it (pipelines), so text goes to stderr
  // then, as `time` does; --json always to stdout.
  std::ostream& text_out = a.command.empty() ? std::cout : std::cerr;
  auto result = telemetry::run_monitor(**session, o, std::cout, std::cerr);
  if (!result.ok()) return report_error(result.status());
  if (result->command && result->command->start_error) {
    std::cerr << "gpuscope: error: " << *result->command->start_error << '\n';
  }
  if (a.json) {
    std::cout << telemetry::summary_to_json(*result).dump(2) << '\n';
  } else {
    telemetry::print_summary(*result, text_out);
  }
  return exit_code(*result);
}

}  // namespace

void add_monitor_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<MonitorArgs>();
  CLI::App* cmd = app.add_subcommand(
      "monitor",
      "What the GPUs are doing: live view, recording (CSV, JSON lines, store), a Prometheus "
      "endpoint; with -- CMD, for the command's whole life, then a summary");
  cmd->add_option("--interval", args->interval_ms, "Sampling interval in ms (20 or more)")
      ->default_val(100)
      ->check(milliseconds_check({.min_seconds = 0.02, .max_seconds = 3600}));
  cmd->add_option("--csv", args->csv, "Record every sample to this CSV file");
  cmd->add_option("--jsonl", args->jsonl, "Record every sample to this JSON-lines file");
  cmd->add_option("--store", args->store,
                  "Record into this SQLite results store (a 'monitor' run)");
  cmd->add_flag("--force", args->force, "Replace a --csv/--jsonl file that gpuscope did not write");
  cmd->add_option("--listen", args->listen,
                  "Serve Prometheus /metrics (dcgm-exporter names) on [ADDR:]PORT; ADDR defaults "
                  "to 127.0.0.1")
      ->check(not_empty_check("give [ADDR:]PORT (PORT 0 picks a free port)"));
  CLI::Option* tui =
      cmd->add_flag("--tui", args->tui, "Show the live view (also while a command runs)");
  cmd->add_flag("--no-tui", args->no_tui, "No live view: per-second lines instead")->excludes(tui);
  cmd->add_flag("--json", args->json, "Print the summary as JSON (schema_version pinned)");
  // The whole value goes to the selector rule (target.h), which refuses an empty entry ("0,")
  // that CLI11's delimiter dropped silently.
  cmd->add_option("--gpu", args->gpus, "Only these GPUs: NVML indices or UUIDs (0,1 or repeated)")
      ->check(gpu_selector_check());
  cmd->add_option("--duration", args->duration_s, "Stop after this many seconds (without CMD)")
      ->check(seconds_check());
  cmd->add_option("command", args->command, "-- CMD ARGS...: run it (no shell) and observe it")
      ->take_all();
  cmd->callback([&runner, args] { runner = [args] { return run_monitor_command(*args); }; });
}

}  // namespace gpuscope::cli
