#include "trace/intervals.h"

#include <algorithm>

namespace gpuscope::trace::detail {
namespace {

// The first of `merged` that ends after `t`.
std::vector<Interval>::const_iterator first_ending_after(const std::vector<Interval>& merged,
                                                         std::int64_t t) {
  return std::lower_bound(merged.begin(), merged.end(), t,
                          [](const Interval& i, std::int64_t x) { return i.end <= x; });
}

}  // namespace

std::vector<Interval> merge(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& i : intervals) {
    if (i.end <= i.start) continue;
    if (!merged.empty() && i.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, i.end);
    } else {
      merged.push_back(i);
    }
  }
  return merged;
}

std::int64_t covered(const std::vector<Interval>& merged, std::int64_t from, std::int64_t to) {
  std::int64_t sum = 0;
  for (auto it = first_ending_after(merged, from); it != merged.end() && it->start < to; ++it) {
    sum += std::min(it->end, to) - std::max(it->start, from);
  }
  return sum;
}

std::int64_t total(const std::vector<Interval>& merged) {
  std::int64_t sum = 0;
  for (const Interval& i : merged) sum += i.end - i.start;
  return sum;
}

std::optional<std::int64_t> next_covered(const std::vector<Interval>& merged, std::int64_t at) {
  const auto it = first_ending_after(merged, at);
  if (it == merged.end()) return std::nullopt;
  return std::max(it->start, at);
}

}  // namespace gpuscope::trace::detail
