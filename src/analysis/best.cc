// The best of several measured candidates, and which of the others it does not really beat.
#include <algorithm>

#include "gpuscope/analysis.h"

namespace gpuscope::analysis {

std::optional<Best> best_of(const std::vector<Candidate>& candidates, bool higher_is_better) {
  if (candidates.empty()) return std::nullopt;
  auto better = [&](const Candidate& a, const Candidate& b) {
    return higher_is_better ? a.value > b.value : a.value < b.value;
  };
  const Candidate* best = &candidates.front();
  for (const Candidate& c : candidates) {
    if (better(c, *best)) best = &c;
  }
  // How much better the best is than `other`, as a ratio minus 1 (>= 0).
  auto lead_over = [&](const Candidate& other) {
    return higher_is_better ? best->value / other.value - 1 : other.value / best->value - 1;
  };
  Best out{best->name, best->value, {}, std::nullopt};
  const Candidate* runner_up = nullptr;
  for (const Candidate& c : candidates) {
    if (&c == best) continue;
    if (!runner_up || better(c, *runner_up)) runner_up = &c;
    if (!best->relative_spread || !c.relative_spread) continue;
    if (lead_over(c) <= std::max(*best->relative_spread, *c.relative_spread)) {
      out.tied_with.push_back(c.name);
    }
  }
  if (runner_up && runner_up->value > 0 && best->value > 0) out.margin = lead_over(*runner_up);
  return out;
}

}  // namespace gpuscope::analysis
