// Telemetry over spans: interpolation, counter deltas, integrals, masks and GPM means.
#include "burn/series.h"

#include <gtest/gtest.h>

namespace gpuscope::burn::detail {
namespace {

// Samples at t = 0, 1, 2, 3: power 100, 200, 200, 400 W; an energy counter integrating it;
// temperature 40, 50, 45, 60; the power-cap bit set in the samples at t = 1 and 2.
std::vector<TelemetrySample> samples() {
  std::vector<TelemetrySample> s(4);
  const double power[] = {100, 200, 200, 400};
  const double temperature[] = {40, 50, 45, 60};
  double energy = 1000;
  for (int i = 0; i < 4; ++i) {
    s[i].t = i;
    s[i].power_w = power[i];
    s[i].temperature_c = temperature[i];
    if (i > 0) energy += 0.5 * (power[i - 1] + power[i]);
    s[i].energy_j = energy;
    s[i].clock_event_reasons = (i == 1 || i == 2) ? 0x4 : 0x0;
  }
  s[2].temperature_c.reset();  // a reading missing from one sample is skipped
  return s;
}

const Reading kPower = [](const TelemetrySample& s) { return s.power_w; };
const Reading kEnergy = [](const TelemetrySample& s) { return s.energy_j; };
const Reading kTemperature = [](const TelemetrySample& s) { return s.temperature_c; };

TEST(Series, InterpolatesBetweenSamples) {
  EXPECT_DOUBLE_EQ(*value_at(samples(), 0.5, kPower), 150);
  EXPECT_DOUBLE_EQ(*value_at(samples(), 2.0, kPower), 200);
  EXPECT_DOUBLE_EQ(*value_at(samples(), 2.0, kTemperature), 55);  // between t = 1 and 3
  EXPECT_FALSE(value_at(samples(), 3.5, kPower));
  EXPECT_FALSE(value_at({}, 1, kPower));
}

TEST(Series, CounterChangeIsClippedToTheSamples) {
  const auto change = counter_change(samples(), {0.5, 2.5}, kEnergy);
  ASSERT_TRUE(change);
  // Energy at 0.5 = 1000 + 0.5 * (150 + 200)/2 ... linear between counter samples.
  EXPECT_DOUBLE_EQ(change->value, (1000 + 150 + 200 + 150) - (1000 + 75));
  EXPECT_DOUBLE_EQ(change->seconds, 2.0);
  const auto clipped = counter_change(samples(), {-1, 10}, kEnergy);
  ASSERT_TRUE(clipped);
  EXPECT_DOUBLE_EQ(clipped->seconds, 3.0);
  EXPECT_DOUBLE_EQ(clipped->value, 150 + 200 + 300);
  EXPECT_FALSE(counter_change(samples(), {5, 6}, kEnergy));
}

TEST(Series, IntegratesWithTrapezoids) {
  const auto area = integrate(samples(), {0, 3}, kPower);
  ASSERT_TRUE(area);
  EXPECT_DOUBLE_EQ(area->value, 150 + 200 + 300);
  const auto part = integrate(samples(), {0.5, 1.5}, kPower);
  ASSERT_TRUE(part);
  EXPECT_DOUBLE_EQ(part->value, 0.5 * (150 + 200) * 0.5 + 200 * 0.5);
  EXPECT_DOUBLE_EQ(*mean_over(samples(), {0, 3}, kPower), 650.0 / 3);
}

TEST(Series, MaxAndMeanOverASpan) {
  EXPECT_DOUBLE_EQ(*max_over(samples(), {0, 2.5}, kTemperature), 50);
  EXPECT_DOUBLE_EQ(*max_over(samples(), {0, 3}, kTemperature), 60);
  // No sample inside: the value at the middle.
  EXPECT_DOUBLE_EQ(*max_over(samples(), {0.25, 0.75}, kTemperature), 45);
  EXPECT_DOUBLE_EQ(*mean_over(samples(), {3, 3}, kPower), 400);
}

TEST(Series, SecondsWithABitHoldEachMaskUntilTheNextSample) {
  const auto capped = seconds_with_bit(samples(), {0, 3}, 0x4);
  ASSERT_TRUE(capped);
  EXPECT_DOUBLE_EQ(capped->value, 2.0);  // [1, 2) and [2, 3)
  EXPECT_DOUBLE_EQ(capped->seconds, 3.0);
  EXPECT_DOUBLE_EQ(seconds_with_bit(samples(), {1.5, 2.5}, 0x4)->value, 1.0);
  EXPECT_DOUBLE_EQ(seconds_with_bit(samples(), {0, 3}, 0x40)->value, 0.0);
}

TEST(Series, GpmMeanWeighsIntervalsByOverlap) {
  std::vector<GpmInterval> intervals(2);
  intervals[0] = {0, 1, {}};
  intervals[0].metrics.tensor_activity = 0.2;
  intervals[1] = {1, 2, {}};
  intervals[1].metrics.tensor_activity = 0.8;
  EXPECT_DOUBLE_EQ(*gpm_mean(intervals, {0.5, 2}, &nvml::GpmMetrics::tensor_activity),
                   (0.2 * 0.5 + 0.8 * 1) / 1.5);
  EXPECT_FALSE(gpm_mean(intervals, {0, 2}, &nvml::GpmMetrics::sm_activity));
  EXPECT_FALSE(gpm_mean(intervals, {5, 6}, &nvml::GpmMetrics::tensor_activity));
}

}  // namespace
}  // namespace gpuscope::burn::detail
