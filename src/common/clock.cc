#include "gpuscope/clock.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gpuscope {

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string format_duration(double seconds, DurationStyle style) {
  const long s = std::lround(std::max(0.0, seconds));
  if (style == DurationStyle::clock) {
    const long h = s / 3600, m = (s / 60) % 60;
    if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s % 60);
    return fmt::format("{}:{:02}", m, s % 60);
  }
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

}  // namespace gpuscope
