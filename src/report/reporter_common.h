// Shared by the reporters: one concrete reporter per format, and how a cell reads.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "gpuscope/reporter.h"

namespace gpuscope::report::detail {

std::unique_ptr<Reporter> make_console_reporter(std::ostream& out);
std::unique_ptr<Reporter> make_json_reporter(std::ostream& out);
std::unique_ptr<Reporter> make_csv_reporter(std::ostream& out);
std::unique_ptr<Reporter> make_markdown_reporter(std::ostream& out);
// not_supported when this gpuscope was built without plotly.js.
Result<std::unique_ptr<Reporter>> make_html_reporter(std::ostream& out);

// For people: the value formatted in its unit, "n/a" when missing.
std::string cell_text(const Value& value, Unit unit);
// For programs: the number in SI units as it is, the text, or null.
nlohmann::json cell_json(const Value& value);

std::string_view tone_name(Tone tone);  // "neutral", "good", "warning", "bad"

// io_error when the stream has failed (disk full, closed pipe).
Status stream_status(const std::ostream& out, std::string_view what);

}  // namespace gpuscope::report::detail
