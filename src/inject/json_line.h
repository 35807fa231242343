// One JSON object per line, built by hand: the injection library links no JSON library, and
// what it writes must be valid JSON whatever bytes a kernel or NVTX name holds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuscope/json_text.h"

namespace gpuscope::inject {

// gpuscope_common's (gpuscope/json_text.h): valid UTF-8 through, control characters escaped,
// each byte that is not valid UTF-8 as U+FFFD, so the line always parses.
using ::gpuscope::append_json_string;

// Converts a wide (UTF-32 on Linux) string to UTF-8; invalid code points become U+FFFD.
std::string wide_to_utf8(const wchar_t* text);

// Builds `{"t":"TYPE",...}\n` into a caller's string (cleared first), field by field.
class JsonLine {
 public:
  JsonLine(std::string& out, std::string_view type);

  JsonLine& u(std::string_view key, uint64_t value);
  JsonLine& i(std::string_view key, int64_t value);
  JsonLine& d(std::string_view key, double value);  // NaN and infinities become null
  JsonLine& b(std::string_view key, bool value);
  JsonLine& s(std::string_view key, std::string_view value);  // escaped
  JsonLine& u3(std::string_view key, uint64_t x, uint64_t y, uint64_t z);
  // `json` must already be valid JSON (an object or array built elsewhere).
  JsonLine& raw(std::string_view key, std::string_view json);

  // Closes the object and the line; returns the finished line.
  std::string_view end();

 private:
  void key(std::string_view key);
  std::string& out_;
};

}  // namespace gpuscope::inject
