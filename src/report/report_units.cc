// Units for people: SI prefixes, percentages, thousands separators.
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "gpuscope/reporter.h"

namespace gpuscope::report {
namespace {

struct UnitInfo {
  Unit unit;
  std::string_view store_symbol;    // as the results store writes it
  std::string_view display_symbol;  // as people read it
};

constexpr std::array<UnitInfo, 17> kUnits = {{
    {Unit::none, "", ""},
    {Unit::count, "count", ""},
    {Unit::ratio, "1", "%"},
    {Unit::factor, "x", "×"},
    {Unit::seconds, "s", "s"},
    {Unit::bytes, "B", "B"},
    {Unit::bytes_per_second, "B/s", "B/s"},
    {Unit::flop_per_second, "FLOP/s", "FLOP/s"},
    {Unit::op_per_second, "OP/s", "OP/s"},
    {Unit::flop_per_joule, "FLOP/J", "FLOP/J"},
    {Unit::op_per_joule, "OP/J", "OP/J"},
    {Unit::watts, "W", "W"},
    {Unit::joules, "J", "J"},
    {Unit::hertz, "Hz", "Hz"},
    {Unit::celsius, "degC", "°C"},
    {Unit::per_second, "1/s", "/s"},
    {Unit::samples_per_second, "samples/s", "samples/s"},
}};

const UnitInfo& info(Unit unit) {
  for (const UnitInfo& u : kUnits) {
    if (u.unit == unit) return u;
  }
  return kUnits[0];
}

// Units printed with decimal SI prefixes.
bool uses_si_prefix(Unit unit) {
  switch (unit) {
    case Unit::bytes_per_second:
    case Unit::flop_per_second:
    case Unit::op_per_second:
    case Unit::flop_per_joule:
    case Unit::op_per_joule:
    case Unit::watts:
    case Unit::joules:
      return true;
    default:
      return false;
  }
}

struct Prefix {
  double factor;
  std::string_view symbol;
};

// The largest prefix that keeps the number at 1 or more (m and u for small values).
Prefix si_prefix(double max_abs) {
  static constexpr Prefix kPrefixes[] = {{1e-18, "E"}, {1e-15, "P"}, {1e-12, "T"}, {1e-9, "G"},
                                         {1e-6, "M"},  {1e-3, "k"},  {1, ""},      {1e3, "m"},
                                         {1e6, "µ"},   {1e9, "n"}};
  if (!(max_abs > 0) || !std::isfinite(max_abs)) return {1, ""};
  for (const Prefix& p : kPrefixes) {
    if (max_abs * p.factor >= 0.9995) return p;
  }
  return kPrefixes[std::size(kPrefixes) - 1];
}

Prefix binary_prefix(double max_abs) {
  static constexpr Prefix kPrefixes[] = {{1.0 / (1ull << 50), "Pi"},
                                         {1.0 / (1ull << 40), "Ti"},
                                         {1.0 / (1ull << 30), "Gi"},
                                         {1.0 / (1ull << 20), "Mi"},
                                         {1.0 / (1ull << 10), "Ki"}};
  for (const Prefix& p : kPrefixes) {
    if (max_abs * p.factor >= 0.9995) return p;
  }
  return {1, ""};
}

// Three significant digits: 781, 78.1, 7.81.
std::string three_digits(double v) {
  double a = std::fabs(v);
  if (a >= 99.95) return fmt::format("{:.0f}", v);
  if (a >= 9.995) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string grouped(double v) {
  long long whole = std::llround(v);
  std::string digits = std::to_string(whole < 0 ? -whole : whole);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return whole < 0 ? "-" + out : out;
}

}  // namespace

Unit cell_unit(const Table& table, std::size_t row, std::size_t column) {
  if (auto it = table.cell_units.find({row, column}); it != table.cell_units.end()) {
    return it->second;
  }
  return column < table.columns.size() ? table.columns[column].unit : Unit::none;
}

std::string_view unit_symbol(Unit unit) {
  return info(unit).store_symbol;
}

std::optional<Unit> unit_from_symbol(std::string_view symbol) {
  if (symbol == "mask") return Unit::count;
  for (const UnitInfo& u : kUnits) {
    if (u.store_symbol == symbol) return u.unit;
  }
  return std::nullopt;
}

DisplayScale display_scale(Unit unit, double max_abs) {
  std::string symbol(info(unit).display_symbol);
  if (uses_si_prefix(unit)) {
    Prefix p = si_prefix(max_abs);
    return {p.factor, fmt::format("{}{}", p.symbol, symbol)};
  }
  switch (unit) {
    case Unit::ratio:
      return {100, "%"};
    case Unit::hertz:
      return {1e-6, "MHz"};  // clocks are read in MHz everywhere (nvidia-smi, datasheets)
    case Unit::bytes: {
      Prefix p = binary_prefix(max_abs);
      return {p.factor, fmt::format("{}B", p.symbol)};
    }
    case Unit::seconds: {
      Prefix p = max_abs >= 1 ? Prefix{1, ""} : si_prefix(max_abs);
      return {p.factor, fmt::format("{}s", p.symbol)};
    }
    default:
      return {1, symbol};
  }
}

std::string format_value(double value, Unit unit) {
  if (!std::isfinite(value)) return "n/a";
  double a = std::fabs(value);
  switch (unit) {
    case Unit::none:
      if (a >= 1e4 || value == std::floor(value)) return grouped(value);
      return fmt::format("{:.4g}", value);
    case Unit::count:
      return grouped(value);
    case Unit::ratio:
      return fmt::format("{:.1f} %", value * 100);
    case Unit::factor:
      return fmt::format("×{:.2f}", value);
    case Unit::per_second:
    case Unit::samples_per_second: {
      std::string_view symbol = unit == Unit::per_second ? "/s" : "samples/s";
      return a >= 1000 ? fmt::format("{} {}", grouped(value), symbol)
                       : fmt::format("{} {}", three_digits(value), symbol);
    }
    case Unit::celsius:
      return fmt::format("{:.0f} °C", value);
    case Unit::hertz:
      return fmt::format("{:.0f} MHz", value * 1e-6);
    default:
      break;
  }
  DisplayScale scale = display_scale(unit, a);
  return fmt::format("{} {}", three_digits(value * scale.factor), scale.symbol);
}

}  // namespace gpuscope::report
