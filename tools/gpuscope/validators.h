// CLI11 validators over the library's option checks (gpuscope/option_checks.h): every command
// refuses the same inputs with the same words (exit code 2).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "gpuscope/option_checks.h"

namespace gpuscope::cli {

// An option given in seconds: a finite number in `range` (more than 0 and at most
// kMaxDurationSeconds by default).
CLI::Validator seconds_check(DurationRange range = {});
// An option given in milliseconds, `range` still in seconds.
CLI::Validator milliseconds_check(DurationRange range);
// --gpu: no empty selector (omit --gpu for every GPU).
CLI::Validator gpu_selector_check();
// A value that must not be empty; `hint` says what to give instead ("give [ADDR:]PORT").
CLI::Validator not_empty_check(std::string hint);

}  // namespace gpuscope::cli
