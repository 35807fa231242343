// Time intervals on one clock (ns): their union and how much of a span it covers. The trace's
// summary (GPU busy time) and diagnose's observations (idle after a wait) measure with these.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gpuscope::trace::detail {

struct Interval {
  std::int64_t start = 0, end = 0;
};

// The union of `intervals`, sorted and disjoint; empty ones are dropped.
std::vector<Interval> merge(std::vector<Interval> intervals);

// Nanoseconds of the disjoint, sorted `merged` inside [from, to).
std::int64_t covered(const std::vector<Interval>& merged, std::int64_t from, std::int64_t to);

// Nanoseconds of the disjoint `merged`.
std::int64_t total(const std::vector<Interval>& merged);

// The first instant at or after `at` inside the disjoint, sorted `merged` (nullopt: none).
std::optional<std::int64_t> next_covered(const std::vector<Interval>& merged, std::int64_t at);

}  // namespace gpuscope::trace::detail
