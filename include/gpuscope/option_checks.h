// The checks every command applies to the same kinds of option, so that one rule holds
// everywhere and is worded the same way:
//
//   durations and intervals   monitor's --duration and --interval, burn's --duration,
//                             bench's --row-timeout and --interval, ...: a finite number, more
//                             than 0 (or at least a command's minimum), at most a sane maximum.
//                             nan, inf, 0 and negative numbers never mean "forever".
//   GPU selectors             --gpu N|UUID|MIG-UUID|all, or a list: an empty selector or an empty
//                             entry ("0,") is an error (omit --gpu for every GPU), never a quiet
//                             "all" (the rule is split_gpu_selector's, gpuscope/target.h).
//
// The CLI turns each into an option validator (tools/gpuscope/validators.h); library entry points
// that take the same values (run_monitor, the sampler, the study plan) check them again with
// these functions.
#pragma once

#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope {

// The longest duration or interval any command accepts: 30 days. A session meant to last
// longer is run without --duration and stopped by a signal.
inline constexpr double kMaxDurationSeconds = 30 * 24 * 3600.0;

struct DurationRange {
  // 0: the value must be more than 0. Otherwise the least value allowed (inclusive).
  double min_seconds = 0;
  double max_seconds = kMaxDurationSeconds;  // inclusive
};

// Why `seconds` is not an acceptable duration ("must be more than 0 and at most 30 days (got
// -1 s)"), or an empty string when it is. The limits and the value are written in readable units
// (ms, s, min, h, days), never as a long number.
std::string duration_problem(double seconds, DurationRange range = {});

// invalid_argument "OPTION: " + duration_problem(...) when `seconds` is not acceptable.
Status check_duration(std::string_view option, double seconds, DurationRange range = {});

// "20 ms", "1.5 s", "90 s", "15 min", "1 h", "30 days", "nan": the largest unit in which the
// value is a whole number (seconds otherwise).
std::string readable_duration(double seconds);

// invalid_argument when `selector` is not a well-formed selector or list (split_gpu_selector):
// "an empty GPU selector; omit --gpu to use every GPU", "an empty entry in the GPU list '0,'".
// Selectors are resolved (and refused when they name no GPU) by resolve_targets().
Status check_gpu_selector(std::string_view selector);

}  // namespace gpuscope
