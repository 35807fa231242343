// gpuscope diagnose [-o DIR] [--json] [--burn FILE] [--html FILE] [--store FILE]
//                   [trace options] -- CMD ARGS...
// gpuscope diagnose [--json] [--html FILE] [--store FILE] DIR
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "gpuscope/diagnose.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/nvml.h"
#include "gpuscope/trace.h"
#include "store_option.h"
#include "trace_run_args.h"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

struct DiagnoseArgs {
  trace::TraceOptions options;
  TraceRunArgs run;
  std::vector<std::string> positional;  // DIR, or -- CMD ARGS...
  std::string burn, html, markdown, store;
};

// Whether "--" came before the positional arguments: `diagnose -- CMD` runs CMD even when CMD
// names a folder; `diagnose DIR` analyses DIR.
bool double_dash_given() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(in, arg, '\0')) {
    if (arg == "--") return true;
  }
  return false;
}

int command_exit_code(const telemetry::MonitorResult& r) {
  if (!r.command) return kExitOk;
  const ProcessExit& e = r.command->exit;
  if (e.term_signal) return 128 + *e.term_signal;
  return e.exit_code.value_or(kExitError);
}

Status write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.flush();
  if (!out) return Status(Code::io_error, fmt::format("cannot write {}", path.string()));
  return Status{};
}

// The outputs every diagnosis gets: stdout (console or JSON), the report files asked for, the
// store; in a folder it recorded itself, diagnose.json and diagnose.html beside the trace.
int emit(const analysis::Diagnosis& d, const DiagnoseArgs& a, bool recorded, double started) {
  const nlohmann::json doc = analysis::diagnosis_to_json(d);
  if (a.run.json) {
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    // With a command, its stdout is its own: the report goes to stderr, as `time` does.
    analysis::print_diagnosis(d, recorded ? std::cerr : std::cout);
  }
  const report::Document document = analysis::diagnosis_document(d);
  if (recorded) {
    Status s = write_text(d.dir / "diagnose.json",
                          doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!s.ok()) return report_error(s);
    auto html = report::write_document_file(document, "html", (d.dir / "diagnose.html").string());
    if (!html.ok() && html.code() != Code::not_supported) return report_error(html);
  }
  report::OutputFiles files;
  files.html = a.html;
  files.markdown = a.markdown;
  if (files.any()) {
    Status s = report::write_outputs(document, files);
    if (!s.ok()) return report_error(s);
  }
  if (!a.store.empty()) {
    auto store = store::Store::open(a.store);
    if (!store.ok()) return report_error(store.status());
    auto id =
        (*store)->write(analysis::diagnosis_run_data(d, started, unix_now_s(), command_line()));
    if (!id.ok()) return report_error(id.status());
    std::cerr << fmt::format("gpuscope: diagnosis stored in {} (run {})\n", a.store, *id);
  }
  return kExitOk;
}

Result<analysis::DiagnoseOptions> diagnose_options(const DiagnoseArgs& a) {
  analysis::DiagnoseOptions o;
  if (!a.run.step_range.empty()) o.step_range = a.run.step_range;
  if (!a.burn.empty()) {
    std::ifstream in(a.burn);
    if (!in) return Status(Code::not_found, fmt::format("--burn {}: cannot read it", a.burn));
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    o.measured_rates = analysis::rates_from_burn_json(j);
    if (o.measured_rates.empty()) {
      return Status(Code::invalid_argument,
                    fmt::format("--burn {}: not a `gpuscope burn --json` result with measured "
                                "GEMM rates",
                                a.burn));
    }
  }
  return o;
}

int run_analyse(const DiagnoseArgs& a, const fs::path& dir) {
  const double started = unix_now_s();
  auto options = diagnose_options(a);
  if (!options.ok()) return report_error(options.status());
  auto d = analysis::diagnose_dir(dir, *options);
  if (!d.ok()) return report_error(d.status());
  return emit(*d, a, false, started);
}

int run_diagnose_command(DiagnoseArgs a) {
  const bool dash = double_dash_given();
  if (a.positional.empty()) {
    std::cerr << "gpuscope: error: diagnose needs a command or a trace folder: gpuscope diagnose "
                 "[options] -- CMD ARGS..., or gpuscope diagnose DIR\n";
    return kExitUsage;
  }
  if (!dash) {
    if (a.positional.size() == 1) return run_analyse(a, a.positional.front());
    std::cerr << "gpuscope: error: to diagnose a command, put -- before it: gpuscope diagnose "
                 "[options] -- CMD ARGS...\n";
    return kExitUsage;
  }
  const double started = unix_now_s();
  auto options = diagnose_options(a);
  if (!options.ok()) return report_error(options.status());
  a.options.command = a.positional;
  if (auto exit = prepare_trace_run(a.options, a.run)) {
    return *exit;
  }

  auto session = nvml::Session::open();
  if (!session.ok()) return report_error(session.status());
  std::ostringstream trace_out;  // the monitor's own output: not part of the diagnosis
  auto run = trace::run_trace(**session, a.options, trace_out, std::cerr);
  if (!run.ok()) return report_error(run.status());
  const int command_code = command_exit_code(run->monitor);
  auto d = analysis::diagnose_dir(a.options.out_dir, *options);
  if (!d.ok()) {
    print_error(d.status());
    return command_code != kExitOk ? command_code : exit_code_for(d.status().code());
  }
  const int code = emit(*d, a, true, started);
  if (!a.run.json) std::cerr << "Trace and report in " << a.options.out_dir.string() << "\n";
  return code != kExitOk ? code : command_code;
}

}  // namespace

void add_diagnose_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<DiagnoseArgs>();
  args->run.command_name = "diagnose";
  CLI::App* cmd = app.add_subcommand(
      "diagnose",
      "Why is my training slow? Traces a command (or reads a trace folder) and names what holds "
      "it back, the fix as code, and the speed-up fixing it should bring, most gain first");
  add_trace_output_options(
      *cmd, args->run, "Trace folder",
      "Print the diagnosis as JSON (\"kind\": \"gpuscope.diagnose\") on stdout");
  cmd->add_option("--burn", args->burn,
                  "A `gpuscope burn --json` result of this GPU: measured rates per precision for "
                  "the tensor-core gain (default: the datasheet's)");
  cmd->add_option("--html", args->html, "Also write the report as HTML to this file");
  cmd->add_option("--md", args->markdown, "Also write the report as Markdown to this file");
  cmd->add_option("--store", args->store, "Record the diagnosis into this SQLite results store");
  add_trace_run_options(*cmd, args->options, args->run);
  cmd->add_option("args", args->positional, "DIR (a trace folder), or -- CMD ARGS...")->take_all();
  cmd->callback([&runner, args] { runner = [args] { return run_diagnose_command(*args); }; });
}

}  // namespace gpuscope::cli
