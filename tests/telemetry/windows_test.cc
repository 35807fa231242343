// Windows over recorded samples, as burn's precisions and bench's rows use them: interpolation,
// counter deltas, integrals, peaks, masks and GPM means. (burn/series.cc had its own copy of
// these, tested with the same numbers; burn now uses these.)
#include <gtest/gtest.h>

#include "gpuscope/telemetry.h"

namespace gpuscope::telemetry {
namespace {

// Samples at t = 0, 1, 2, 3: power 100, 200, 200, 400 W; an energy counter integrating it;
// temperature 40, 50, 45, 60; the power-cap bit set in the samples at t = 1 and 2.
std::vector<GpuSample> samples(bool energy_counter = true) {
  std::vector<GpuSample> s(4);
  const double power[] = {100, 200, 200, 400};
  const double temperature[] = {40, 50, 45, 60};
  double energy = 1000;
  for (int i = 0; i < 4; ++i) {
    s[i].t_s = i;
    s[i].values.set(Metric::power_w, power[i]);
    s[i].values.set(Metric::temperature_c, temperature[i]);
    if (i > 0) energy += 0.5 * (power[i - 1] + power[i]);
    if (energy_counter) s[i].values.set(Metric::energy_j, energy);
    s[i].values.set(Metric::clock_event_reasons, (i == 1 || i == 2) ? 0x4 : 0x0);
  }
  s[2].values.set(Metric::temperature_c, std::nullopt);  // a missing reading is skipped
  return s;
}

TEST(Windows, InterpolateBetweenSamples) {
  EXPECT_DOUBLE_EQ(*value_at(samples(), Metric::power_w, 0.5), 150);
  EXPECT_DOUBLE_EQ(*value_at(samples(), Metric::power_w, 2.0), 200);
  EXPECT_DOUBLE_EQ(*value_at(samples(), Metric::temperature_c, 2.0), 55);  // between t = 1 and 3
  EXPECT_FALSE(value_at(samples(), Metric::power_w, 3.5));
  EXPECT_FALSE(value_at({}, Metric::power_w, 1));
}

TEST(Windows, TheEnergyCounterChangeIsClippedToTheSamples) {
  const auto change = energy_between(samples(), 0.5, 2.5);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->source, EnergySource::counter);
  // Energy at 0.5 = 1000 + 0.5 * (150 + 200)/2 ... linear between counter samples.
  EXPECT_DOUBLE_EQ(change->joules, (1000 + 150 + 200 + 150) - (1000 + 75));
  EXPECT_DOUBLE_EQ(change->seconds, 2.0);
  const auto clipped = energy_between(samples(), -1, 10);
  ASSERT_TRUE(clipped);
  EXPECT_DOUBLE_EQ(clipped->seconds, 3.0);
  EXPECT_DOUBLE_EQ(clipped->joules, 150 + 200 + 300);
  EXPECT_FALSE(energy_between(samples(), 5, 6));
}

TEST(Windows, WithoutACounterPowerIsIntegratedWithTrapezoids) {
  const auto area = energy_between(samples(false), 0, 3);
  ASSERT_TRUE(area);
  EXPECT_EQ(area->source, EnergySource::power_integral);
  EXPECT_DOUBLE_EQ(area->joules, 150 + 200 + 300);
  const auto part = energy_between(samples(false), 0.5, 1.5);
  ASSERT_TRUE(part);
  EXPECT_DOUBLE_EQ(part->joules, 0.5 * (150 + 200) * 0.5 + 200 * 0.5);
  EXPECT_DOUBLE_EQ(mean_between(samples(), Metric::power_w, 0, 3)->value, 650.0 / 3);
}

TEST(Windows, PeakAndMeanOverASpan) {
  EXPECT_DOUBLE_EQ(*peak_between(samples(), Metric::temperature_c, 0, 2.5), 50);
  EXPECT_DOUBLE_EQ(*peak_between(samples(), Metric::temperature_c, 0, 3), 60);
  // No sample inside: no peak (burn then takes the value at the middle: 45).
  EXPECT_FALSE(peak_between(samples(), Metric::temperature_c, 0.25, 0.75));
  EXPECT_DOUBLE_EQ(*value_at(samples(), Metric::temperature_c, 0.5), 45);
  EXPECT_DOUBLE_EQ(mean_between(samples(), Metric::power_w, 3, 3)->value, 400);
}

TEST(Windows, MasksHoldUntilTheNextSample) {
  const auto capped = throttle_between(samples(), 0, 3);
  ASSERT_TRUE(capped.contains(nvml::ThrottleReason::sw_power_cap));
  EXPECT_DOUBLE_EQ(capped.at(nvml::ThrottleReason::sw_power_cap).seconds, 2.0);  // [1, 3)
  EXPECT_FALSE(capped.at(nvml::ThrottleReason::sw_power_cap).from_counter);
  EXPECT_DOUBLE_EQ(
      throttle_between(samples(), 1.5, 2.5).at(nvml::ThrottleReason::sw_power_cap).seconds, 1.0);
  EXPECT_DOUBLE_EQ(capped.at(nvml::ThrottleReason::hw_thermal).seconds, 0.0);  // bit 0x40
}

TEST(Windows, GpmMeansWeighIntervalsByOverlap) {
  std::vector<GpuSample> s(2);
  s[0].t_s = 1;
  s[0].gpm_interval_s = 1;
  s[0].values.set(Metric::tensor_activity, 0.2);
  s[1].t_s = 2;
  s[1].gpm_interval_s = 1;
  s[1].values.set(Metric::tensor_activity, 0.8);
  EXPECT_DOUBLE_EQ(mean_between(s, Metric::tensor_activity, 0.5, 2)->value,
                   (0.2 * 0.5 + 0.8 * 1) / 1.5);
  EXPECT_FALSE(mean_between(s, Metric::sm_activity, 0, 2));
  EXPECT_FALSE(mean_between(s, Metric::tensor_activity, 5, 6));
}

TEST(Windows, AMigInstanceSeesItsOwnGpmAndTheGpusOtherReadings) {
  std::vector<GpuSample> s = samples();
  s[3].gpm_interval_s = 3;
  s[3].values.set(Metric::tensor_activity, 0.9);  // the whole GPU's (absent under MIG, kept here)
  s[3].instances.push_back({2, {}, 3.0});
  s[3].instances.back().values.set(Metric::tensor_activity, 0.4);
  s[3].instances.push_back({5, {}, 3.0});
  s[3].instances.back().values.set(Metric::tensor_activity, 0.1);
  const std::vector<GpuSample> two = instance_view(s, 2);
  EXPECT_DOUBLE_EQ(mean_between(two, Metric::tensor_activity, 0, 3)->value, 0.4);
  EXPECT_DOUBLE_EQ(mean_between(two, Metric::power_w, 0, 3)->value, 650.0 / 3);
  EXPECT_FALSE(mean_between(instance_view(s, 7), Metric::tensor_activity, 0, 3));
  EXPECT_TRUE(measured_per_instance(Metric::sm_activity));
  EXPECT_FALSE(measured_per_instance(Metric::power_w));
  EXPECT_FALSE(measured_per_instance(Metric::energy_j));
  EXPECT_FALSE(measured_per_instance(Metric::temperature_c));
}

}  // namespace
}  // namespace gpuscope::telemetry
