// gpuscope report [STORE|FILE|TRACE_DIR...] [--run ID...] [-o report.html]
//                 [--json/--csv/--md/--html FILE] [--title T] [--list]
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "commands.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/files.h"
#include "gpuscope/report.h"
#include "gpuscope/reporter.h"

namespace gpuscope::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::vector<store::RunId> run_ids;
  std::string output;
  std::string format;
  std::string title = "gpuscope report";
  report::OutputFiles files;
  bool list = false;
  bool force = false;
  std::string command_line;
};

// "report.html" -> html; the format named by -o's extension.
std::string format_for(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".md" || ext == ".markdown") return "md";
  if (ext == ".csv") return "csv";
  if (ext == ".json") return "json";
  if (ext == ".txt") return "console";
  return "html";
}

files::OutputKind output_kind(const std::string& format) {
  if (format == "md" || format == "markdown") return files::OutputKind::report_markdown;
  if (format == "csv") return files::OutputKind::report_csv;
  if (format == "json") return files::OutputKind::report_json;
  if (format == "console") return files::OutputKind::report_text;
  return files::OutputKind::report_html;
}

// Every path of this report, checked together before anything is read or written.
Status check_report_paths(const ReportArgs& args) {
  using files::output_path;
  using files::OutputKind;
  std::vector<files::PathUse> uses;
  for (const std::string& input : args.inputs) uses.push_back(files::input_path("", input));
  const std::string format = args.format.empty() ? format_for(args.output) : args.format;
  uses.push_back(output_path("-o", args.output, output_kind(format)));
  uses.push_back(output_path("--json", args.files.json, OutputKind::report_json));
  uses.push_back(output_path("--csv", args.files.csv, OutputKind::report_csv));
  uses.push_back(output_path("--md", args.files.markdown, OutputKind::report_markdown));
  uses.push_back(output_path("--html", args.files.html, OutputKind::report_html));
  return files::check_paths(uses, args.force);
}

int list_runs(const std::vector<store::RunData>& runs) {
  std::cout << fmt::format("{:>5}  {:<8} {:<17} {:<16} {:<20} {}\n", "run", "kind", "started (UTC)",
                           "host", "label", "GPUs / source");
  for (const store::RunData& run : runs) {
    std::string gpus;
    for (const store::GpuRecord& g : run.run.gpus) gpus += (gpus.empty() ? "" : ", ") + g.name;
    std::string started = "-";
    if (run.run.started_unix_s > 0) {
      started = fmt::format("{:%Y-%m-%d %H:%M}",
                            fmt::gmtime(static_cast<std::time_t>(run.run.started_unix_s)));
    }
    std::cout << fmt::format("{:>5}  {:<8} {:<17} {:<16} {:<20} {} / {}\n", run.run.id,
                             run.run.kind, started, run.run.host, run.run.label.value_or(""), gpus,
                             run.source);
  }
  return kExitOk;
}

int run_report(ReportArgs args) {
  // A `gpuscope trace` folder is its summary.json (a "trace" run).
  for (std::string& input : args.inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(input, ec)) {
      input = (std::filesystem::path(input) / "summary.json").string();
    }
  }
  if (Status paths = check_report_paths(args); !paths.ok()) return report_error(paths);
  auto runs = report::load_runs(args.inputs, args.run_ids);
  if (!runs.ok()) return report_error(runs.status());
  if (args.list) return list_runs(*runs);

  report::ReportOptions options;
  options.title = args.title;
  options.command_line = args.command_line;
  report::Document document = report::build_report(*runs, options);

  report::OutputFiles files = args.files;
  std::string format = args.format;
  if (!args.output.empty()) {
    if (format.empty()) format = format_for(args.output);
    Status written = report::write_document_file(document, format, args.output);
    if (!written.ok()) return report_error(written);
    if (args.output != "-") {
      std::cerr << fmt::format("gpuscope: wrote {} ({} runs, {} sections)\n", args.output,
                               runs->size(), document.sections.size());
    }
  }
  Status written = report::write_outputs(document, files);
  if (!written.ok()) return report_error(written);
  if (args.output.empty() && !files.any()) {
    written = report::write_document_file(document, format.empty() ? "console" : format, "-");
    if (!written.ok()) return report_error(written);
  }
  return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "One report of results stores and result files: a self-contained HTML page with charts "
      "(-o report.html), or console, Markdown, CSV, JSON");
  cmd->add_option("inputs", args->inputs,
                  "Results stores (SQLite, written with --store), result files (gpuscope "
                  "JSON: records, `info --json`, burn worker lines) and trace folders")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--run", args->run_ids, "Only these runs of the stores (repeatable)");
  cmd->add_option("-o,--output", args->output,
                  "Write the report here; its format follows the extension (.html, .md, .csv, "
                  ".json, .txt); '-' for standard output");
  cmd->add_option("--format", args->format, "Format for -o: html, md, csv, json, console")
      ->check(CLI::IsMember({"html", "md", "markdown", "csv", "json", "console"}));
  cmd->add_option("--title", args->title, "The report's title");
  cmd->add_option("--json", args->files.json, "Also write the report as JSON to this file");
  cmd->add_option("--csv", args->files.csv, "Also write its tables as CSV to this file");
  cmd->add_option("--md", args->files.markdown, "Also write it as Markdown to this file");
  cmd->add_option("--html", args->files.html, "Also write it as HTML to this file");
  cmd->add_flag("--list", args->list, "List the runs found instead of reporting on them");
  cmd->add_flag("--force", args->force,
                "Replace output files that gpuscope did not write (never an input)");
  cmd->callback([&runner, args] {
    std::string line = "gpuscope report";
    for (const std::string& input : args->inputs) line += " " + input;
    for (store::RunId id : args->run_ids) line += fmt::format(" --run {}", id);
    args->command_line = line;
    runner = [args] { return run_report(*args); };
  });
}

}  // namespace gpuscope::cli
