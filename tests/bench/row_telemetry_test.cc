// A row's telemetry from samples: energy over the timed windows only, power, J/sample,
// time-weighted activity, throttle time, and short windows flagged.
#include "bench/row_telemetry.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope::bench::detail {
namespace {

using telemetry::GpuSample;
using telemetry::Metric;

// Samples every 100 ms from 0 to `until`: power `watts` inside [busy0, busy1], 60 W outside,
// the energy counter integrating it, GPM SM activity 0.9 when busy.
std::vector<GpuSample> samples(double until, double busy0, double busy1, double watts) {
  std::vector<GpuSample> out;
  double energy = 1000;
  for (int i = 0; i * 0.1 <= until + 1e-9; ++i) {
    const double t = i * 0.1;
    const bool busy = t > busy0 && t <= busy1 + 1e-9;
    if (i > 0) energy += (busy ? watts : 60.0) * 0.1;
    GpuSample s;
    s.t_s = t;
    s.values.set(Metric::power_w, busy ? watts : 60.0);
    s.values.set(Metric::energy_j, energy);
    s.values.set(Metric::memory_used_bytes, busy ? 30e9 : 1e9);
    if (i > 0) {
      s.gpm_interval_s = 0.1;
      s.values.set(Metric::sm_activity, busy ? 0.9 : 0.0);
      s.values.set(Metric::tensor_activity, busy ? 0.5 : 0.0);
    }
    out.push_back(s);
  }
  return out;
}

TEST(RowTelemetry, EnergyOverTheTimedWindowsOnly) {
  // Busy at 400 W from 1 s to 4 s; two timed windows [2, 3] and [3, 4] of 1000 samples each.
  auto s = samples(5, 1.0, 4.0, 400);
  std::vector<TimedWindow> windows = {{2.0, 3.0, 1000}, {3.0, 4.0, 1000}};
  Row row;
  fill_row_telemetry(s, windows, 0.5, 4.5, row);
  ASSERT_TRUE(row.energy_j);
  EXPECT_NEAR(*row.energy_j, 800, 1e-6);  // 400 W x 2 s; the 60 W idle is not counted
  EXPECT_NEAR(*row.power_avg_w, 400, 1e-6);
  EXPECT_NEAR(*row.energy_per_sample_j, 0.4, 1e-9);
  EXPECT_NEAR(*row.sm_activity, 0.9, 1e-9);
  EXPECT_NEAR(*row.tensor_activity, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(*row.gpu_memory_peak_bytes, 30e9);
  EXPECT_DOUBLE_EQ(*row.timed_seconds, 2.0);
  EXPECT_FALSE(row.short_windows);
}

// `samples` of GPU `gpu`.
std::vector<GpuSample> on_gpu(std::vector<GpuSample> s, unsigned gpu) {
  for (GpuSample& x : s) x.gpu = gpu;
  return s;
}

TEST(RowTelemetry, ADataParallelRowCountsEveryGpuAndEveryRanksSamples) {
  // GPU 0 at 400 W, GPU 1 at 300 W, busy from 1 s to 4 s; rank 0's windows [2, 3] and [3, 4] of
  // 1000 samples each, every rank training as many.
  std::vector<GpuSample> s = on_gpu(samples(5, 1.0, 4.0, 400), 0);
  for (const GpuSample& x : on_gpu(samples(5, 1.0, 4.0, 300), 1)) s.push_back(x);
  const std::vector<TimedWindow> windows = {{2.0, 3.0, 1000}, {3.0, 4.0, 1000}};
  Row both;
  fill_row_telemetry(s, windows, 0.5, 4.5, both, true, {0, 1});
  ASSERT_TRUE(both.energy_j);
  EXPECT_NEAR(*both.energy_j, 800 + 600, 1e-6);
  EXPECT_NEAR(*both.power_avg_w, 700, 1e-6);
  EXPECT_DOUBLE_EQ(*both.timed_samples, 4000);
  EXPECT_NEAR(*both.energy_per_sample_j, 1400.0 / 4000, 1e-9);
  EXPECT_NEAR(*both.sm_activity, 0.9, 1e-9);
  EXPECT_DOUBLE_EQ(*both.gpu_memory_peak_bytes, 30e9);

  // A one-GPU row counts its own GPU's samples only.
  Row one;
  fill_row_telemetry(s, windows, 0.5, 4.5, one, true, {1});
  EXPECT_NEAR(*one.energy_j, 600, 1e-6);
  EXPECT_DOUBLE_EQ(*one.timed_samples, 2000);

  // A GPU without samples (not sampled, or not there): no energy rather than a part of it.
  Row missing;
  fill_row_telemetry(s, windows, 0.5, 4.5, missing, true, {0, 2});
  EXPECT_FALSE(missing.energy_j);
  EXPECT_FALSE(missing.energy_per_sample_j);
  EXPECT_FALSE(missing.sm_activity);
}

TEST(RowTelemetry, ShortWindowsAreFlaggedAndUncoveredOnesGiveNoEnergy) {
  auto s = samples(5, 1.0, 4.0, 400);
  Row row;
  fill_row_telemetry(s, {{2.0, 2.4, 100}}, 0, 5, row);
  EXPECT_TRUE(row.short_windows);
  EXPECT_NEAR(*row.energy_per_sample_j, 400 * 0.4 / 100, 1e-9);

  Row late;  // the window lies after the last sample: no energy rather than a wrong one
  fill_row_telemetry(s, {{6.0, 8.0, 100}}, 0, 8, late);
  EXPECT_FALSE(late.energy_j);
  EXPECT_FALSE(late.energy_per_sample_j);
}

TEST(RowTelemetry, RowSamplerMovesNoReadingToTheSlowRounds) {
  const telemetry::SamplerOptions o = row_sampler_options({"2"}, 50);
  EXPECT_EQ(o.interval.count(), 50);
  EXPECT_EQ(o.gpus, std::vector<std::string>{"2"});
  EXPECT_FALSE(o.processes);
  EXPECT_TRUE(std::isinf(o.slow_reading_threshold_s));  // energy every round, however slow
}

TEST(RowTelemetry, NoWindowsNoEnergy) {
  Row row;
  fill_row_telemetry(samples(2, 0, 2, 300), {}, 0, 2, row);
  EXPECT_FALSE(row.energy_j);
  EXPECT_TRUE(row.gpu_memory_peak_bytes);
}

TEST(SampleLog, DropsOldSamplesButKeepsOneBefore) {
  SampleLog log;
  for (const auto& s : samples(1, 0, 1, 300)) log.add(s);
  log.drop_before(0.55);
  auto kept = log.snapshot();
  ASSERT_FALSE(kept.empty());
  EXPECT_NEAR(kept.front().t_s, 0.5, 1e-9);
  EXPECT_NEAR(*log.last_t(), 1.0, 1e-9);
}

}  // namespace
}  // namespace gpuscope::bench::detail
