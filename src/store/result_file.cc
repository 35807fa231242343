// read_result_file: whichever JSON a gpuscope command wrote, as runs.
#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "gpuscope/files.h"
#include "gpuscope/store.h"
#include "store/importers.h"

namespace gpuscope::store {
namespace {

using nlohmann::json;

// An object's "kind" when it is a string; "" otherwise (absent, or any other type: the file is
// then not one of ours, which the callers say, rather than a type_error escaping them).
std::string kind_of(const json& object) {
  auto it = object.find("kind");
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// JSON lines: every non-empty line one object. Empty when the text is not that.
std::vector<json> parse_json_lines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object()) return {};
    lines.push_back(std::move(parsed));
  }
  return lines;
}

Result<std::vector<RunData>> runs_from_text(const std::string& text) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_discarded() && document.is_object() && !document.contains("v")) {
    return runs_from_document(document);
  }
  std::vector<json> lines = parse_json_lines(text);
  if (!lines.empty() && kind_of(lines.front()) == "gpuscope.monitor") {
    GPUSCOPE_ASSIGN_OR_RETURN(RunData run, detail::run_from_monitor_lines(lines));
    return std::vector<RunData>{std::move(run)};
  }
  if (!lines.empty() && lines.front().contains("v") && lines.front().contains("type")) {
    GPUSCOPE_ASSIGN_OR_RETURN(RunData run, detail::run_from_burn_worker_lines(lines));
    return std::vector<RunData>{std::move(run)};
  }
  return Status(Code::data_error,
                "neither a gpuscope JSON document nor gpuscope-burn-worker JSON lines");
}

}  // namespace

Result<std::vector<RunData>> runs_from_document(const json& document) {
  std::string kind = document.is_object() ? kind_of(document) : "";
  if (kind == "gpuscope.records") return runs_from_json(document);
  if (kind == "gpuscope.burn") {
    GPUSCOPE_ASSIGN_OR_RETURN(RunData run, detail::run_from_burn_json(document));
    return std::vector<RunData>{std::move(run)};
  }
  if (kind == "gpuscope.monitor") {  // a monitor file of its session line alone
    GPUSCOPE_ASSIGN_OR_RETURN(RunData run, detail::run_from_monitor_lines({document}));
    return std::vector<RunData>{std::move(run)};
  }
  if (kind == "gpuscope.trace") {
    GPUSCOPE_ASSIGN_OR_RETURN(RunData run, detail::run_from_trace_summary(document));
    return std::vector<RunData>{std::move(run)};
  }
  if (kind == "gpuscope.info") {
    GPUSCOPE_ASSIGN_OR_RETURN(RunData run, detail::run_from_info_json(document));
    return std::vector<RunData>{std::move(run)};
  }
  return Status(Code::data_error,
                kind.empty() ? std::string("a JSON document without a gpuscope \"kind\"")
                             : fmt::format("a JSON document of kind '{}', which gpuscope does "
                                           "not report on",
                                           kind));
}

Result<std::vector<RunData>> read_result_file(const std::string& path) {
  GPUSCOPE_ASSIGN_OR_RETURN(std::string text, files::read_file(path, files::kMaxResultFileBytes));
  auto runs = runs_from_text(text);
  if (!runs.ok()) return runs.status().with_context(path);
  std::string stem = std::filesystem::path(path).stem().string();
  for (RunData& data : *runs) {
    data.source = path;
    if (!data.run.label && data.run.started_unix_s == 0) data.run.label = stem;
  }
  return runs;
}

}  // namespace gpuscope::store
