#include "analysis/gain_models.h"

#include <algorithm>

namespace gpuscope::analysis::detail {
namespace {

constexpr double kMaxSavedShare = 0.95;

double gain_of(double step_s, double saved_s) {
  if (!(step_s > 0)) return 1;
  saved_s = std::clamp(saved_s, 0.0, kMaxSavedShare * step_s);
  return step_s / (step_s - saved_s);
}

}  // namespace

GainRange time_saved(double step_s, double saved_low_s, double saved_high_s) {
  GainRange g{gain_of(step_s, saved_low_s), gain_of(step_s, saved_high_s)};
  if (g.low > g.high) std::swap(g.low, g.high);
  return g;
}

GainRange faster_part(double step_s, double part_s, double ratio_low, double ratio_high) {
  const double lo = std::max(1.0, ratio_low), hi = std::max(1.0, ratio_high);
  return time_saved(step_s, part_s * (1 - 1 / lo), part_s * (1 - 1 / hi));
}

GainRange tensor_core_gain(double step_s, double fp32_matmul_s, double memory_bound_s,
                           double fp32_rate, double tf32_rate, double bf16_rate) {
  if (!(fp32_rate > 0)) return {};
  const double low = std::max(1.0, 0.5 * tf32_rate / fp32_rate);
  const double high = std::max(1.0, bf16_rate / fp32_rate);
  return time_saved(step_s, fp32_matmul_s * (1 - 1 / low),
                    fp32_matmul_s * (1 - 1 / high) + 0.5 * std::max(0.0, memory_bound_s));
}

GainRange clock_gain(double mean_clock_hz, double max_clock_hz, double busy_share) {
  if (!(mean_clock_hz > 0) || !(max_clock_hz > mean_clock_hz)) return {};
  const double high = max_clock_hz / mean_clock_hz;
  return {1 + (high - 1) * std::clamp(busy_share, 0.0, 1.0), high};
}

GainRange batch_gain(double headroom, double sm_activity) {
  double high = std::max(1.0, headroom);
  if (sm_activity > 0) high = std::min(high, 1 / sm_activity);
  high = std::max(1.0, high);
  return {1 + (high - 1) / 4, high};
}

GainRange fused_optimizer_gain(double step_s, double span_s, double kernel_s) {
  return time_saved(step_s, span_s - kernel_s / 2, span_s - kernel_s / 4);
}

}  // namespace gpuscope::analysis::detail
