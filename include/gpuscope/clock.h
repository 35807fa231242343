// Wall-clock time and durations as people read them.
#pragma once

#include <string>

namespace gpuscope {

// Seconds since the Unix epoch, now (system clock, with its sub-second part).
double unix_now_s();

enum class DurationStyle {
  compact,  // "45s", "4m10s", "1h02m" (bench's progress line)
  clock,    // "0:45", "4:10", "1:02:03" (study's progress)
};
// `seconds` rounded to whole seconds (negative counts as 0), in `style`.
std::string format_duration(double seconds, DurationStyle style);

}  // namespace gpuscope
