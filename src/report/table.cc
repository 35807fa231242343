#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::report {

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // not a continuation byte
  }));
}

void TextTable::print(std::ostream& out, int indent) const {
  std::vector<std::size_t> widths;
  auto widen = [&](const std::vector<std::string>& cells) {
    if (widths.size() < cells.size()) widths.resize(cells.size(), 0);
    for (std::size_t i = 0; i < cells.size(); ++i)
      widths[i] = std::max(widths[i], display_width(cells[i]));
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);

  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line(static_cast<std::size_t>(indent), ' ');
    for (std::size_t i = 0; i < cells.size(); ++i) {
      bool last = i + 1 == cells.size();
      line += cells[i];
      if (!last) line += std::string(widths[i] - display_width(cells[i]) + 2, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  if (!header_.empty()) emit(header_);
  for (const auto& row : rows_) emit(row);
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0 || std::fabs(value - std::round(value)) < 0.05) {
    return fmt::format("{:.0f} {}", value, kUnits[unit]);
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string format_rate(double per_second, const char* unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  int prefix = 0;
  while (std::fabs(per_second) >= 1000.0 && prefix < 5) {
    per_second /= 1000.0;
    ++prefix;
  }
  // Three significant digits: "3.35 TB/s", "54.7 GB/s", "989 TFLOP/s".
  int decimals = std::fabs(per_second) >= 100.0 ? 0 : std::fabs(per_second) >= 10.0 ? 1 : 2;
  return fmt::format("{:.{}f} {}{}", per_second, decimals, kPrefixes[prefix], unit);
}

std::string format_number(double value, int decimals) {
  return fmt::format("{:.{}f}", value, decimals);
}

std::string format_cuda_version(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

}  // namespace gpuscope::report
