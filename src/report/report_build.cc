// gpuscope report: loading runs from stores and files, and assembling the document.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "gpuscope/report.h"
#include "gpuscope/version.h"
#include "report/report_model.h"

namespace gpuscope::report {
namespace {

bool looks_like_sqlite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[16] = {};
  in.read(magic, sizeof magic);
  return in.gcount() == sizeof magic && std::string_view(magic, 15) == "SQLite format 3";
}

std::string now_utc() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

Result<std::vector<store::RunData>> load_runs(const std::vector<std::string>& paths,
                                              const std::vector<store::RunId>& run_ids) {
  std::vector<store::RunData> runs;
  std::set<store::RunId> found;
  for (const std::string& given : paths) {
    // A `gpuscope trace` folder is read as its summary.json (a "trace" run).
    std::error_code ec;
    const std::string path = std::filesystem::is_directory(given, ec)
                                 ? (std::filesystem::path(given) / "summary.json").string()
                                 : given;
    if (!looks_like_sqlite(path)) {
      GPUSCOPE_ASSIGN_OR_RETURN(std::vector<store::RunData> from_file,
                                store::read_result_file(path));
      for (store::RunData& run : from_file) runs.push_back(std::move(run));
      continue;
    }
    store::StoreOptions options;
    options.read_only = true;
    GPUSCOPE_ASSIGN_OR_RETURN(auto opened, store::Store::open(path, options));
    GPUSCOPE_ASSIGN_OR_RETURN(std::vector<store::RunSummary> listed, opened->list_runs());
    std::reverse(listed.begin(), listed.end());  // oldest first: the baseline of comparisons
    for (const store::RunSummary& summary : listed) {
      bool wanted =
          run_ids.empty() || std::find(run_ids.begin(), run_ids.end(), summary.id) != run_ids.end();
      if (!wanted) continue;
      GPUSCOPE_ASSIGN_OR_RETURN(store::RunData run, opened->load_run(summary.id));
      found.insert(summary.id);
      runs.push_back(std::move(run));
    }
  }
  for (store::RunId id : run_ids) {
    if (!found.count(id)) {
      return Status(Code::not_found, fmt::format("no store given has a run {}", id));
    }
  }
  return runs;
}

Document build_report(const std::vector<store::RunData>& runs, const ReportOptions& options) {
  detail::ReportBuilder builder(runs, options);
  detail::add_burn_section(builder);
  detail::add_comparison_section(builder);
  detail::add_telemetry_section(builder);
  detail::add_bench_section(builder);
  detail::add_share_section(builder);
  detail::add_sweep_section(builder);
  detail::add_trace_section(builder);
  detail::add_systems_section(builder);
  detail::add_other_measurements_section(builder);
  detail::add_runs_section(builder);

  ReportContext context;
  context.title = options.title;
  context.generated_utc = options.generated_utc.empty() ? now_utc() : options.generated_utc;
  context.gpuscope_version = std::string(version());
  context.command_line = options.command_line;
  std::set<std::string> seen;
  for (const store::RunData& run : runs) {
    if (!run.source.empty() && seen.insert(run.source).second) {
      context.sources.push_back(run.source);
    }
  }
  return builder.finish(std::move(context));
}

}  // namespace gpuscope::report
