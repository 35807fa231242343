// Choosing a reporter by name, and writing documents to files.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <sstream>

#include "gpuscope/files.h"
#include "report/reporter_common.h"

namespace gpuscope::report {

namespace detail {

std::string cell_text(const Value& value, Unit unit) {
  if (const double* number = std::get_if<double>(&value)) return format_value(*number, unit);
  if (const std::string* text = std::get_if<std::string>(&value)) return *text;
  return "n/a";
}

nlohmann::json cell_json(const Value& value) {
  if (const double* number = std::get_if<double>(&value)) {
    return std::isfinite(*number) ? nlohmann::json(*number) : nlohmann::json(nullptr);
  }
  if (const std::string* text = std::get_if<std::string>(&value)) return *text;
  return nullptr;
}

std::string_view tone_name(Tone tone) {
  switch (tone) {
    case Tone::neutral:
      return "neutral";
    case Tone::good:
      return "good";
    case Tone::warning:
      return "warning";
    case Tone::bad:
      return "bad";
  }
  return "neutral";
}

Status stream_status(const std::ostream& out, std::string_view what) {
  if (out) return Status{};
  return Status(Code::io_error,
                fmt::format("writing {} failed{}", what,
                            errno ? fmt::format(": {}", std::strerror(errno)) : ""));
}

}  // namespace detail

std::vector<std::string_view> reporter_formats() {
  return {"console", "json", "csv", "md", "html"};
}

Result<std::unique_ptr<Reporter>> make_reporter(std::string_view format, std::ostream& out) {
  if (format == "console") return detail::make_console_reporter(out);
  if (format == "json") return detail::make_json_reporter(out);
  if (format == "csv") return detail::make_csv_reporter(out);
  if (format == "md" || format == "markdown") return detail::make_markdown_reporter(out);
  if (format == "html") return detail::make_html_reporter(out);
  return Status(
      Code::invalid_argument,
      fmt::format("no reporter named '{}' (there are: console, json, csv, md, html)", format));
}

Status write_document(Reporter& reporter, const Document& document) {
  GPUSCOPE_RETURN_IF_ERROR(
      reporter.report_context(document.context, document.summary, document.findings));
  for (const Section& section : document.sections) {
    GPUSCOPE_RETURN_IF_ERROR(reporter.report_section(section));
  }
  return reporter.finalize();
}

Status write_document_file(const Document& document, std::string_view format,
                           const std::string& path) {
  if (path == "-") {
    GPUSCOPE_ASSIGN_OR_RETURN(auto reporter, make_reporter(format, std::cout));
    GPUSCOPE_RETURN_IF_ERROR(write_document(*reporter, document));
    std::cout.flush();
    return detail::stream_status(std::cout, "standard output");
  }
  // Written beside the target and renamed: a reader never sees half a report, and a failed
  // write leaves an older report in place.
  std::ostringstream out;
  GPUSCOPE_ASSIGN_OR_RETURN(auto reporter, make_reporter(format, out));
  GPUSCOPE_RETURN_IF_ERROR(write_document(*reporter, document));
  return files::write_file_atomically(path, out.str());
}

Status write_outputs(const Document& document, const OutputFiles& files) {
  const std::pair<std::string_view, const std::string*> wanted[] = {
      {"json", &files.json}, {"csv", &files.csv}, {"md", &files.markdown}, {"html", &files.html}};
  for (const auto& [format, path] : wanted) {
    if (!path->empty()) GPUSCOPE_RETURN_IF_ERROR(write_document_file(document, format, *path));
  }
  return Status{};
}

}  // namespace gpuscope::report
