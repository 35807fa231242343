// The sweep's answers: knees, the minimum-energy and minimum energy-delay points, and the
// recommendation in the seed's terms.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuscope/analysis.h"
#include "gpuscope/sweep.h"

namespace gpuscope::sweep {
namespace {

constexpr double kFractions[] = {0.8, 0.9, 0.95};
constexpr double kRecommendedFraction = 0.9;

std::vector<const Point*> measured_by_limit(const std::vector<Point>& points) {
  std::vector<const Point*> measured;
  for (const Point& p : points) {
    if (!p.skipped && p.samples_per_second > 0) measured.push_back(&p);
  }
  std::sort(measured.begin(), measured.end(),
            [](const Point* a, const Point* b) { return a->value < b->value; });
  return measured;
}

// A point's value at `limit_w`, linear between the measured limits around it (the end values
// outside them); nullopt when a point it needs lacks the value.
template <class Get>
std::optional<double> value_at(const std::vector<const Point*>& measured, double limit_w, Get get) {
  if (measured.empty()) return std::nullopt;
  if (limit_w <= measured.front()->value) return get(*measured.front());
  if (limit_w >= measured.back()->value) return get(*measured.back());
  for (std::size_t i = 1; i < measured.size(); ++i) {
    const Point& hi = *measured[i];
    if (hi.value < limit_w) continue;
    const Point& lo = *measured[i - 1];
    const auto a = get(lo), b = get(hi);
    if (!a || !b) return std::nullopt;
    return *a + (*b - *a) * (limit_w - lo.value) / (hi.value - lo.value);
  }
  return std::nullopt;
}

std::optional<double> speed(const Point& p) {
  return p.samples_per_second;
}
std::optional<double> energy(const Point& p) {
  return p.joules_per_sample;
}
std::optional<double> temperature(const Point& p) {
  return p.temperature_max_c;
}

std::optional<Recommendation::Change> change_at(const std::vector<const Point*>& measured,
                                                double limit_w, double reference_w) {
  const auto s = value_at(measured, limit_w, speed), s0 = value_at(measured, reference_w, speed);
  const auto e = value_at(measured, limit_w, energy), e0 = value_at(measured, reference_w, energy);
  if (!s || !s0 || !e || !e0 || !(*s0 > 0) || !(*e0 > 0)) return std::nullopt;
  Recommendation::Change change;
  change.reference = reference_w;
  change.speed = *s / *s0 - 1;
  change.energy = *e / *e0 - 1;
  const auto t = value_at(measured, limit_w, temperature);
  const auto t0 = value_at(measured, reference_w, temperature);
  if (t && t0) change.temperature_c = *t - *t0;
  return change;
}

// "−10 % speed, −25 % energy, −5 °C"
std::string describe(const Recommendation::Change& c) {
  auto signed_percent = [](double fraction) {
    const long percent = std::lround(fraction * 100);
    return fmt::format("{}{} %", percent < 0 ? "\u2212" : "+", std::labs(percent));
  };
  std::string text =
      fmt::format("{} speed, {} energy", signed_percent(c.speed), signed_percent(c.energy));
  if (c.temperature_c) {
    const long degrees = std::lround(*c.temperature_c);
    text += fmt::format(", {}{} \u00b0C", degrees < 0 ? "\u2212" : "+", std::labs(degrees));
  }
  return text;
}

}  // namespace

void compute_answers(WorkloadResult& result, std::optional<double> prior_limit_w, double round_to,
                     const std::string& unit) {
  const auto measured = measured_by_limit(result.points);
  result.knees.clear();
  result.min_energy_value.reset();
  result.min_energy_delay_value.reset();
  result.recommendation.reset();
  if (measured.empty()) return;

  std::vector<analysis::SweepPoint> curve;
  for (const Point* p : measured) curve.push_back({p->value, p->samples_per_second});
  for (double fraction : kFractions) {
    if (const auto knee = analysis::find_knee(curve, fraction)) {
      result.knees.push_back({fraction, knee->power_limit_w, knee->at_lowest_limit});
    }
  }

  std::optional<double> best_energy, best_edp;
  for (const Point* p : measured) {
    if (!p->joules_per_sample) continue;
    const double edp = *p->joules_per_sample / p->samples_per_second;  // J x s per sample
    if (!best_energy || *p->joules_per_sample < *best_energy) {
      best_energy = *p->joules_per_sample;
      result.min_energy_value = p->value;
    }
    if (!best_edp || edp < *best_edp) {
      best_edp = edp;
      result.min_energy_delay_value = p->value;
    }
  }

  const auto knee = std::find_if(result.knees.begin(), result.knees.end(), [](const Knee& k) {
    return std::abs(k.fraction - kRecommendedFraction) < 1e-9;
  });
  if (knee == result.knees.end()) return;
  Recommendation recommendation;
  recommendation.value = std::round(knee->value / round_to) * round_to;
  const double max_w = measured.back()->value;
  const auto vs_max = change_at(measured, recommendation.value, max_w);
  if (!vs_max) return;
  recommendation.vs_max = *vs_max;
  recommendation.text = fmt::format("{:.0f} {}: {} vs {:.0f} {} (the fastest)",
                                    recommendation.value, unit, describe(*vs_max), max_w, unit);
  if (prior_limit_w) {
    const double prior_w = *prior_limit_w;
    if (std::abs(prior_w - max_w) >= 1) {
      recommendation.vs_prior = change_at(measured, recommendation.value, prior_w);
      if (recommendation.vs_prior) {
        recommendation.text += fmt::format("; {} vs {:.0f} {} (the limit before the sweep)",
                                           describe(*recommendation.vs_prior), prior_w, unit);
      }
    }
  }
  result.recommendation = recommendation;
}

}  // namespace gpuscope::sweep
