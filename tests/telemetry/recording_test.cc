// A recording made on a real H100 (tests/fixtures/telemetry/h100_recorded_2026-11-22_short.jsonl):
// it reads back, the summary recomputed from its samples is the one gpuscope wrote at the time,
// and the numbers are believable for a short bf16 training run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/monitor.h"

namespace gpuscope::telemetry {
namespace {

using ::testing::DoubleNear;

const char kRecording[] = "/telemetry/h100_recorded_2026-11-22_short.jsonl";

Recording load() {
  auto rec = read_recording(std::string(GPUSCOPE_TEST_FIXTURES) + kRecording);
  EXPECT_TRUE(rec.ok()) << rec.status().to_string();
  return rec.ok() ? std::move(rec).value() : Recording{};
}

TEST(H100Recording, ReadsBackWithItsSessionAndSummary) {
  const Recording rec = load();
  ASSERT_EQ(rec.session.gpus.size(), 1u);
  EXPECT_EQ(rec.session.gpus[0].target.name, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(rec.session.gpus[0].gpm);
  EXPECT_EQ(rec.session.interval_s, 0.1);
  EXPECT_EQ(rec.samples.size(), 140u);
  ASSERT_TRUE(rec.summary.has_value());
  // GPM pairs every 100 ms, never closer.
  int pairs = 0;
  for (const GpuSample& s : rec.samples) {
    if (!s.gpm_interval_s) continue;
    ++pairs;
    EXPECT_GE(*s.gpm_interval_s, 0.1 - 1e-9);
    EXPECT_LE(*s.gpm_interval_s, 0.25);
  }
  EXPECT_GT(pairs, 120);
}

TEST(H100Recording, TheSummaryRecomputesFromTheSamples) {
  const Recording rec = load();
  SummaryBuilder builder(rec.session.gpus, rec.session.started_unix_s, rec.session.interval_s);
  for (const GpuSample& s : rec.samples) {
    Tick tick;
    tick.t_s = s.t_s;
    tick.gpus = {s};
    builder.add(tick);
  }
  const Summary summary = builder.summary(14.0);
  const auto& recorded = (*rec.summary)["gpus"][0];
  const GpuSummary& g = summary.gpus.at(0);
  ASSERT_TRUE(g.energy.has_value());
  EXPECT_EQ(g.energy->source, EnergySource::counter);
  EXPECT_THAT(g.energy->joules, DoubleNear(recorded["energy_j"].get<double>(), 1e-6));
  EXPECT_THAT(*g.sm_activity_avg, DoubleNear(recorded["sm_activity_avg"].get<double>(), 1e-9));
  EXPECT_THAT(*g.tensor_activity_avg,
              DoubleNear(recorded["tensor_activity_avg"].get<double>(), 1e-9));
  EXPECT_EQ(*g.power_peak_w, recorded["power_peak_w"].get<double>());
}

TEST(H100Recording, TheNumbersAreBelievable) {
  const Recording rec = load();
  double first = 0, last = 0;
  for (const GpuSample& s : rec.samples) {
    if (s.t_s > 0 && first == 0) first = s.t_s;
    last = s.t_s;
    if (auto p = s.values.get(Metric::power_w)) {
      EXPECT_GT(*p, 50);   // an H100 idles near 70-140 W
      EXPECT_LE(*p, 700);  // its power limit
    }
    if (auto a = s.values.get(Metric::sm_activity)) {
      EXPECT_GE(*a, 0);
      EXPECT_LE(*a, 1);
    }
    if (auto t = s.values.get(Metric::tensor_activity); t && s.values.has(Metric::sm_activity)) {
      EXPECT_LE(*t, *s.values.get(Metric::sm_activity) + 1e-6);  // tensor work runs on SMs
    }
  }
  // The energy counter against the integral of the instantaneous power, over the counter's span:
  // two sensors of the same GPU, within a few percent.
  auto counter = energy_between(rec.samples, first, last);
  ASSERT_TRUE(counter.has_value());
  auto power = mean_between(rec.samples, Metric::power_instant_w, first, last);
  ASSERT_TRUE(power.has_value());
  const double integral = power->value * counter->seconds;
  EXPECT_NEAR(integral / counter->joules, 1.0, 0.05);
  // The training ran: SM activity rose well above idle at some point.
  auto peak = peak_between(rec.samples, Metric::sm_activity, first, last);
  ASSERT_TRUE(peak.has_value());
  EXPECT_GT(*peak, 0.5);
}

}  // namespace
}  // namespace gpuscope::telemetry
