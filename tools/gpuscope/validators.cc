#include "validators.h"

#include <cstdlib>

namespace gpuscope::cli {
namespace {

// `unit_seconds`: what one unit of the option's value is in seconds; `unit` its name.
CLI::Validator duration_check(double unit_seconds, std::string unit, DurationRange range) {
  return CLI::Validator(
      [unit_seconds, unit, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end == nullptr || *end != '\0') {
          return "must be a number of " + unit + " (got '" + text + "')";
        }
        return duration_problem(value * unit_seconds, range);
      },
      "");
}

}  // namespace

CLI::Validator seconds_check(DurationRange range) {
  return duration_check(1.0, "seconds", range);
}

CLI::Validator milliseconds_check(DurationRange range) {
  return duration_check(1e-3, "ms", range);
}

CLI::Validator gpu_selector_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        Status s = check_gpu_selector(text);
        return s.ok() ? std::string() : s.message();
      },
      "");
}

CLI::Validator not_empty_check(std::string hint) {
  return CLI::Validator(
      [hint](std::string& text) -> std::string {
        return text.empty() ? "must not be empty; " + hint : std::string();
      },
      "");
}

}  // namespace gpuscope::cli
