// The convergence guard's verdicts: pure arithmetic on loss curves (thresholds in bench.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/enum_names.h"
#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

constexpr gpuscope::detail::EnumName<Verdict> kVerdictNames[] = {
    {Verdict::ok, "ok"},
    {Verdict::diverged, "diverged"},
    {Verdict::nan, "nan"},
    {Verdict::scale_collapse, "scale_collapse"},
    {Verdict::not_learning, "not_learning"},
    {Verdict::unknown, "unknown"}};
static_assert(gpuscope::detail::names_every_value(kVerdictNames, Verdict::unknown));

struct Ends {
  double early = 0, late = 0;
};

// Means of the first and last tail_fraction of the steps (at least one step each).
Ends ends(const std::vector<double>& losses, double tail_fraction) {
  const std::size_t n = losses.size();
  const std::size_t k = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::floor(static_cast<double>(n) * tail_fraction)));
  Ends e;
  for (std::size_t i = 0; i < k; ++i) {
    e.early += losses[i];
    e.late += losses[n - k + i];
  }
  e.early /= static_cast<double>(k);
  e.late /= static_cast<double>(k);
  return e;
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  return gpuscope::detail::name_in(kVerdictNames, v);
}

std::optional<Verdict> parse_verdict(std::string_view name) {
  return gpuscope::detail::value_named(kVerdictNames, name);
}

bool verdict_is_bad(Verdict v) {
  return v != Verdict::ok && v != Verdict::unknown;
}

GuardResult judge_guard(const std::string& mode, const LossCurve& curve,
                        const std::optional<LossCurve>& fp32, const GuardThresholds& t) {
  const auto& losses = curve.losses;
  if (losses.size() < 2) {
    return {Verdict::unknown, fmt::format("{} loss values: too few to judge", losses.size())};
  }
  for (std::size_t i = 0; i < losses.size(); ++i) {
    if (!std::isfinite(losses[i])) {
      return {Verdict::nan, fmt::format("the loss is not finite from step {} on", i)};
    }
  }
  if (curve.loss_scale && *curve.loss_scale < t.min_loss_scale) {
    return {Verdict::scale_collapse, fmt::format("the loss scale fell to {:.3g} (under {:.3g})",
                                                 *curve.loss_scale, t.min_loss_scale)};
  }
  if (curve.skipped_steps) {
    const double share =
        static_cast<double>(*curve.skipped_steps) / static_cast<double>(losses.size());
    if (share > t.max_skipped_share) {
      return {Verdict::scale_collapse, fmt::format("{} of {} steps were skipped for overflow",
                                                   *curve.skipped_steps, losses.size())};
    }
  }
  const Ends own = ends(losses, t.tail_fraction);
  if (own.late > own.early) {
    return {Verdict::diverged,
            fmt::format("the loss rose from {:.4g} to {:.4g}", own.early, own.late)};
  }
  if (!(own.late < t.learned_fraction * own.early)) {
    return {Verdict::not_learning,
            fmt::format("the loss hardly fell: {:.4g} -> {:.4g} (needs < {:.0f}%)", own.early,
                        own.late, t.learned_fraction * 100)};
  }
  if (mode != "fp32" && fp32 && fp32->losses.size() >= 2 && all_finite(fp32->losses)) {
    const Ends ref = ends(fp32->losses, t.tail_fraction);
    const double drop = std::max(0.0, ref.early - ref.late);
    const double excess = own.late - ref.late;
    if (excess > t.min_excess && excess > t.diverge_share_of_drop * drop) {
      return {Verdict::diverged,
              fmt::format("ends at {:.4g}, fp32 at {:.4g} (more than {:.0f}% of fp32's drop of "
                          "{:.4g} above it)",
                          own.late, ref.late, t.diverge_share_of_drop * 100, drop)};
    }
    return {Verdict::ok, fmt::format("{:.4g} -> {:.4g}; fp32 {:.4g} -> {:.4g}", own.early, own.late,
                                     ref.early, ref.late)};
  }
  return {Verdict::ok, fmt::format("{:.4g} -> {:.4g}", own.early, own.late)};
}

}  // namespace gpuscope::bench
