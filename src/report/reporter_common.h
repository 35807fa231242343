// Shared by the reporters: one concrete reporter per format, and how a cell reads.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

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

// A reporter that writes one format to a stream: it names its format, and says whether the
// stream took everything, naming the report ("the console report") when it did not.
class StreamReporter : public Reporter {
 public:
  // `format` and `what` must outlive the reporter (string literals).
  StreamReporter(std::ostream& out, std::string_view format, std::string_view what)
      : out_(out), format_(format), what_(what) {}
  std::string_view format() const override { return format_; }
  // Flushes the stream; io_error when it has failed.
  Status finalize() override {
    out_.flush();
    return written();
  }

 protected:
  // io_error when the stream has failed so far.
  Status written() const { return stream_status(out_, what_); }

  std::ostream& out_;

 private:
  std::string_view format_;
  std::string_view what_;
};

}  // namespace gpuscope::report::detail
