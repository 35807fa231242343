// Plain-text tables and unit formatting for console reporters.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace gpuscope::report {

// How many columns `text` takes on a terminal: UTF-8 code points ("°C" is 2, not 3 bytes).
std::size_t display_width(const std::string& text);

// Columns padded to their widest cell (display_width); the header row comes first unless there
// is none; no trailing blanks.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header = {}) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  // Each line starts with `indent` spaces; columns are separated by two spaces.
  void print(std::ostream& out, int indent = 0) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string format_bytes(std::uint64_t bytes);                 // "79.6 GiB", "512 MiB", "4 KiB"
std::string format_rate(double per_second, const char* unit);  // "989.4 T" + unit
std::string format_number(double value, int decimals = 0);
std::string format_cuda_version(int version);  // 13000 -> "13.0"

}  // namespace gpuscope::report
