// Windows and the session summary on hand-made samples, where every number can be worked out:
// energy from the counter or from power, time-weighted means (GPM by interval), throttle time
// from counters or masks, peaks, lost GPUs, and which GPUs a command used.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/telemetry.h"

namespace gpuscope::telemetry {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;

GpuSample sample(double t, std::initializer_list<std::pair<Metric, double>> values,
                 std::optional<double> gpm_interval = {}) {
  GpuSample s;
  s.t_s = t;
  s.gpm_interval_s = gpm_interval;
  for (const auto& [m, v] : values) s.values.set(m, v);
  return s;
}

// 0..4 s: power 100 W then 300 W from t = 2 (linear between samples), an energy counter that
// advances 1000 J/s, the power-cap bit set in [1, 2), its counter at 0.8 s over the run.
std::vector<GpuSample> series() {
  std::vector<GpuSample> s;
  for (int i = 0; i <= 4; ++i) {
    const double t = i;
    const double power = t < 2 ? 100 : 300;
    const double mask = i == 1 ? 4 : 0;
    s.push_back(sample(t, {{Metric::power_w, power},
                           {Metric::energy_j, 5000 + 1000 * t},
                           {Metric::clock_event_reasons, mask},
                           {Metric::throttle_sw_power_cap_s, 10 + 0.2 * t},
                           {Metric::memory_used_bytes, 100.0 * i}}));
  }
  return s;
}

TEST(Windows, EnergyComesFromTheCounterWhenThereIsOne) {
  auto s = series();
  auto e = energy_between(s, 0.5, 3.5);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->source, EnergySource::counter);
  EXPECT_DOUBLE_EQ(e->joules, 3000);  // interpolated at both edges
  EXPECT_DOUBLE_EQ(e->seconds, 3.0);
}

TEST(Windows, WithoutACounterEnergyIsThePowerIntegral) {
  auto s = series();
  for (GpuSample& x : s) x.values.set(Metric::energy_j, std::nullopt);
  auto e = energy_between(s, 0, 4);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->source, EnergySource::power_integral);
  // Trapezoids: 100 + (100+300)/2 + 300 + 300.
  EXPECT_DOUBLE_EQ(e->joules, 100 + 200 + 300 + 300);
}

TEST(Windows, WindowsOutsideTheSamplesCoverOnlyWhatWasSampled) {
  auto s = series();
  auto mean = mean_between(s, Metric::power_w, 3, 10);
  ASSERT_TRUE(mean.has_value());
  EXPECT_DOUBLE_EQ(mean->seconds, 1.0);
  EXPECT_DOUBLE_EQ(mean->value, 300);
  EXPECT_FALSE(energy_between(s, 5, 6).has_value());
  EXPECT_EQ(value_at(s, Metric::power_w, 1.5), 200);
  EXPECT_FALSE(value_at(s, Metric::power_w, 4.5).has_value());
  EXPECT_EQ(peak_between(s, Metric::memory_used_bytes, 0, 2.5), 200);
}

TEST(Windows, ThrottleTimeFromCountersElseFromMasks) {
  auto s = series();
  auto t = throttle_between(s, 0, 4);
  ASSERT_TRUE(t.contains(nvml::ThrottleReason::sw_power_cap));
  EXPECT_TRUE(t[nvml::ThrottleReason::sw_power_cap].from_counter);
  EXPECT_THAT(t[nvml::ThrottleReason::sw_power_cap].seconds, DoubleNear(0.8, 1e-12));
  // hw_slowdown has no counter in NVML: estimated from the masks (none set).
  ASSERT_TRUE(t.contains(nvml::ThrottleReason::hw_slowdown));
  EXPECT_FALSE(t[nvml::ThrottleReason::hw_slowdown].from_counter);
  EXPECT_EQ(t[nvml::ThrottleReason::hw_slowdown].seconds, 0);

  for (GpuSample& x : s) x.values.set(Metric::throttle_sw_power_cap_s, std::nullopt);
  auto masks = throttle_between(s, 0, 4);
  EXPECT_FALSE(masks[nvml::ThrottleReason::sw_power_cap].from_counter);
  EXPECT_DOUBLE_EQ(masks[nvml::ThrottleReason::sw_power_cap].seconds, 1.0);  // held [1, 2)
}

TEST(Windows, GpmMeansWeighTheirIntervals) {
  // 0.1 s at 100% then 0.3 s at 0%: the mean is 25%, not the 50% of a plain average.
  std::vector<GpuSample> s = {sample(0.0, {}), sample(0.1, {{Metric::sm_activity, 1.0}}, 0.1),
                              sample(0.4, {{Metric::sm_activity, 0.0}}, 0.3)};
  auto mean = mean_between(s, Metric::sm_activity, 0, 1);
  ASSERT_TRUE(mean.has_value());
  EXPECT_DOUBLE_EQ(mean->value, 0.25);
  EXPECT_DOUBLE_EQ(mean->seconds, 0.4);
  // Clipped: only [0.05, 0.1] of the first interval is in the window.
  auto clipped = mean_between(s, Metric::sm_activity, 0.05, 0.2);
  ASSERT_TRUE(clipped.has_value());
  EXPECT_THAT(clipped->value, DoubleNear(0.05 / 0.15, 1e-12));
}

Tick tick_of(std::vector<GpuSample> samples, double t) {
  Tick tick;
  tick.t_s = t;
  tick.cpu_s = 1e-4;
  tick.wall_s = 2e-4;
  tick.gpus = std::move(samples);
  return tick;
}

TEST(Summary, FoldsTicksPerGpuAndAsksAboutEachPidOnce) {
  SampledGpu a, b;
  a.target.gpu_index = 0;
  a.gpm = true;
  b.target.gpu_index = 1;
  int asked = 0;
  SummaryBuilder builder({a, b}, 1000.0, 0.1, [&asked](unsigned pid) {
    ++asked;
    return pid == 11;
  });
  auto s = series();
  for (std::size_t i = 0; i < s.size(); ++i) {
    GpuSample on0 = s[i];
    on0.gpu = 0;
    on0.processes = std::vector<ProcessSample>{{11, "python3", 400 + 100 * i, 0.9, 0.1},
                                               {12, "other", 50, 0.1, 0.0}};
    GpuSample on1 = sample(static_cast<double>(i), {{Metric::power_w, 50}});
    on1.gpu = 1;
    on1.processes = std::vector<ProcessSample>{{12, "other", 50, 0.1, 0.0}};
    if (i == 3) {
      on1 = GpuSample{};
      on1.gpu = 1;
      on1.t_s = 3;
      on1.lost = true;
    }
    std::vector<GpuSample> gpus = {on0};
    if (i <= 3) gpus.push_back(on1);
    builder.add(tick_of(gpus, static_cast<double>(i)));
  }
  const Summary summary = builder.summary(4.2);
  EXPECT_EQ(asked, 2);  // pids 11 and 12, once each
  ASSERT_EQ(summary.gpus.size(), 2u);
  const GpuSummary& g0 = summary.gpus[0];
  EXPECT_EQ(g0.samples, 5u);
  EXPECT_DOUBLE_EQ(g0.seconds, 4);
  ASSERT_TRUE(g0.energy.has_value());
  EXPECT_DOUBLE_EQ(g0.energy->joules, 4000);
  EXPECT_DOUBLE_EQ(*g0.power_avg_w, 1000);  // the counter's 1000 J/s, whatever power_w said
  EXPECT_DOUBLE_EQ(*g0.power_peak_w, 300);
  EXPECT_DOUBLE_EQ(*g0.memory_peak_bytes, 400);
  EXPECT_THAT(g0.command_pids, ElementsAre(11u));
  EXPECT_DOUBLE_EQ(*g0.command_memory_peak_bytes, 800);
  const GpuSummary& g1 = summary.gpus[1];
  EXPECT_EQ(g1.lost_at_s, 3.0);
  EXPECT_TRUE(g1.command_pids.empty());
  ASSERT_TRUE(g1.energy.has_value());
  EXPECT_EQ(g1.energy->source, EnergySource::power_integral);
  EXPECT_DOUBLE_EQ(g1.energy->joules, 100);  // 50 W over [0, 2]; lost at 3
  ASSERT_TRUE(summary.command_gpus.has_value());
  EXPECT_THAT(*summary.command_gpus, ElementsAre(0u));
  EXPECT_DOUBLE_EQ(*summary.energy_j, 4100);
  EXPECT_EQ(summary.sampler.ticks, 5u);
  EXPECT_DOUBLE_EQ(summary.sampler.cpu_per_tick_s, 1e-4);
}

TEST(Summary, WithoutACommandNoGpusAreAttributed) {
  SampledGpu a;
  SummaryBuilder builder({a}, 0, 0.1);
  builder.add(tick_of({sample(0, {{Metric::power_w, 10}})}, 0));
  EXPECT_FALSE(builder.summary(1).command_gpus.has_value());
}

TEST(Catalogue, NamesAreUniqueAndDcgmNamesFollowThePrometheusRules) {
  std::set<std::string_view> names, dcgm;
  for (const MetricInfo& info : metric_catalogue()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_EQ(metric_by_name(info.name), info.metric);
    EXPECT_FALSE(info.unit.empty()) << info.name;
    if (!info.dcgm_name.empty()) {
      EXPECT_TRUE(dcgm.insert(info.dcgm_name).second) << info.dcgm_name;
      EXPECT_TRUE(info.dcgm_name.starts_with("DCGM_FI_")) << info.dcgm_name;
      EXPECT_FALSE(info.dcgm_help.empty()) << info.dcgm_name;
    }
  }
  EXPECT_EQ(metric_info(Metric::energy_j).kind, MetricKind::counter);
  EXPECT_EQ(metric_info(Metric::energy_j).dcgm_name, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  EXPECT_EQ(metric_info(Metric::energy_j).dcgm_scale, 1000);  // DCGM counts mJ
  EXPECT_EQ(metric_info(Metric::gpu_utilization).dcgm_name, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(metric_info(Metric::sm_clock_hz).dcgm_scale, 1e-6);
  EXPECT_FALSE(metric_by_name("no_such_metric").has_value());
}

}  // namespace
}  // namespace gpuscope::telemetry
