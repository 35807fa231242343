#include "trace/step_period.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

namespace gpuscope::trace::detail {
namespace {

constexpr std::size_t kMaxCandidateNames = 64;
constexpr double kRegularSpacingShare = 0.8;

// The spacing a name recurs at, when at least kRegularSpacingShare of its spacings are that one.
std::optional<std::size_t> regular_spacing(const std::vector<std::size_t>& positions) {
  std::map<std::size_t, std::size_t> counts;
  for (std::size_t i = 1; i < positions.size(); ++i) ++counts[positions[i] - positions[i - 1]];
  std::size_t best = 0, best_count = 0;
  for (const auto& [spacing, count] : counts) {
    if (count > best_count) best = spacing, best_count = count;
  }
  const double share = static_cast<double>(best_count) / static_cast<double>(positions.size() - 1);
  if (best == 0 || share < kRegularSpacingShare) return std::nullopt;
  return best;
}

double period_score(std::span<const std::uint32_t> names, std::size_t period) {
  const std::size_t n = names.size() - period;
  std::size_t same = 0;
  for (std::size_t i = 0; i < n; ++i) same += names[i] == names[i + period] ? 1 : 0;
  return static_cast<double>(same) / static_cast<double>(n);
}

std::size_t best_phase(std::span<const std::int64_t> gap_before_ns, std::size_t period) {
  if (gap_before_ns.empty()) return 0;
  std::vector<double> sum(period, 0.0);
  std::vector<std::size_t> count(period, 0);
  // The first kernel's gap is the time before the window: not a step boundary's evidence.
  for (std::size_t i = 1; i < gap_before_ns.size(); ++i) {
    sum[i % period] += static_cast<double>(gap_before_ns[i]);
    ++count[i % period];
  }
  std::size_t phase = 0;
  double best = -1;
  for (std::size_t p = 0; p < period; ++p) {
    const double mean = count[p] > 0 ? sum[p] / static_cast<double>(count[p]) : 0.0;
    if (mean > best) best = mean, phase = p;
  }
  return phase;
}

}  // namespace

std::optional<StepPeriod> find_step_period(std::span<const std::uint32_t> names,
                                           std::span<const std::int64_t> gap_before_ns) {
  if (names.size() < kMinSteps) return std::nullopt;
  std::unordered_map<std::uint32_t, std::vector<std::size_t>> positions;
  for (std::size_t i = 0; i < names.size(); ++i) positions[names[i]].push_back(i);

  // The names seen least often (but at least kMinSteps times) are the likeliest once-a-step ones.
  std::vector<const std::vector<std::size_t>*> recurring;
  for (const auto& entry : positions) {
    if (entry.second.size() >= kMinSteps) recurring.push_back(&entry.second);
  }
  std::sort(recurring.begin(), recurring.end(),
            [](const auto* a, const auto* b) { return a->size() < b->size(); });
  if (recurring.size() > kMaxCandidateNames) recurring.resize(kMaxCandidateNames);

  std::vector<std::size_t> candidates;
  for (const auto* p : recurring) {
    auto spacing = regular_spacing(*p);
    if (spacing && *spacing * kMinSteps <= names.size()) candidates.push_back(*spacing);
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

  std::vector<std::pair<std::size_t, double>> scored;
  double best_score = 0;
  for (std::size_t c : candidates) {
    const double score = period_score(names, c);
    scored.emplace_back(c, score);
    best_score = std::max(best_score, score);
  }
  if (best_score < kMinPeriodScore) return std::nullopt;
  for (const auto& [period, score] : scored) {  // ascending: the smallest good one
    if (score + kScoreSlack < best_score) continue;
    StepPeriod result;
    result.period = period;
    result.score = score;
    result.phase = best_phase(gap_before_ns, period);
    result.steps = (names.size() - result.phase) / period;
    if (result.steps < kMinSteps) return std::nullopt;
    return result;
  }
  return std::nullopt;
}

}  // namespace gpuscope::trace::detail
