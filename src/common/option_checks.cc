#include "gpuscope/option_checks.h"

#include <fmt/format.h>

#include <cmath>

#include "gpuscope/target.h"

namespace gpuscope {

std::string readable_duration(double seconds) {
  if (std::isnan(seconds)) return "nan";
  if (std::isinf(seconds)) return seconds > 0 ? "inf" : "-inf";
  struct Unit {
    double seconds;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86400, "days"}, {3600, "h"}, {60, "min"}, {1, "s"}};
  const double magnitude = std::fabs(seconds);
  for (const Unit& unit : kUnits) {
    const double count = magnitude / unit.seconds;
    if (count >= 1 && count == std::floor(count) && count < 1e9) {
      if (unit.seconds == 86400 && count == 1)
        return fmt::format("{}1 day", seconds < 0 ? "-" : "");
      return fmt::format("{:g} {}", seconds / unit.seconds, unit.name);
    }
  }
  if (magnitude < 1 && magnitude > 0) return fmt::format("{:g} ms", seconds * 1e3);
  return fmt::format("{:g} s", seconds);
}

std::string duration_problem(double seconds, DurationRange range) {
  const bool too_small = range.min_seconds > 0 ? !(seconds >= range.min_seconds) : !(seconds > 0);
  const bool too_large = !(seconds <= range.max_seconds);
  if (std::isfinite(seconds) && !too_small && !too_large) return "";
  const std::string lower = range.min_seconds > 0
                                ? fmt::format("at least {}", readable_duration(range.min_seconds))
                                : "more than 0";
  return fmt::format("must be {} and at most {} (got {})", lower,
                     readable_duration(range.max_seconds), readable_duration(seconds));
}

Status check_duration(std::string_view option, double seconds, DurationRange range) {
  const std::string problem = duration_problem(seconds, range);
  if (problem.empty()) return Status{};
  return Status(Code::invalid_argument, fmt::format("{}: {}", option, problem));
}

Status check_gpu_selector(std::string_view selector) {
  return split_gpu_selector(selector).status();
}

}  // namespace gpuscope
