// `gpuscope bench --resume FILE`: whether FILE is an earlier attempt at this matrix, and which
// of its rows are kept.
#include <fmt/format.h>

#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

std::string on_off(bool on) {
  return on ? "on" : "off";
}

std::string or_default(const std::optional<int>& v) {
  return v ? std::to_string(*v) : "default";
}

}  // namespace

bool row_is_final(const Row& row) {
  return !row.skipped || (row.skip_code != "interrupted" && row.skip_code != "timeout");
}

Status check_resumable(const BenchResult& earlier, const std::vector<RowSpec>& rows,
                       const RunOptions& o) {
  const std::string hint = " (resume with the options of the run being resumed)";
  if (earlier.planned != rows.size()) {
    return Status(Code::invalid_argument,
                  fmt::format("the file to resume is a matrix of {} rows; this one has {}{}",
                              earlier.planned, rows.size(), hint));
  }
  for (std::size_t i = 0; i < earlier.rows.size(); ++i) {
    const RowSpec& then = earlier.rows[i].spec;
    const RowSpec& now = rows[i];
    if (then.label() != now.label()) {
      return Status(Code::invalid_argument,
                    fmt::format("row {} is '{}' in the file to resume but '{}' in this matrix{}",
                                i + 1, then.label(), now.label(), hint));
    }
    if (then.torch_args() != now.torch_args()) {
      return Status(Code::invalid_argument,
                    fmt::format("row {} ({}) ran with gpuscope-torch arguments '{}'; this matrix "
                                "has '{}'{}",
                                i + 1, now.label(), joined(then.torch_args()),
                                joined(now.torch_args()), hint));
    }
    if (o.guard && then.guard_steps != now.guard_steps) {
      return Status(
          Code::invalid_argument,
          fmt::format("row {} ({}) had --guard-steps {}; this matrix has {}{}", i + 1, now.label(),
                      or_default(then.guard_steps), or_default(now.guard_steps), hint));
    }
  }
  if (earlier.guard_enabled != o.guard) {
    return Status(Code::invalid_argument,
                  fmt::format("the file to resume ran with --guard {}; this run has --guard {}",
                              on_off(earlier.guard_enabled), on_off(o.guard)));
  }
  if (o.guard && earlier.guard_seed != o.guard_seed) {
    return Status(Code::invalid_argument,
                  fmt::format("the file to resume ran with --guard-seed {}; this run has {}",
                              earlier.guard_seed, o.guard_seed));
  }
  if (earlier.gpu_index != o.gpu) {
    return Status(Code::invalid_argument,
                  fmt::format("the file to resume was measured on GPU {}; this run is on GPU {} "
                              "(--gpu)",
                              earlier.gpu_index, o.gpu));
  }
  return {};
}

}  // namespace gpuscope::bench
