// The sampler against the fake NVML: what each reading becomes (SI units, fractions), GPM pairs
// at least 100 ms apart, slow readings once a second, a GPU that stops answering, and the
// thread's cadence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include <mutex>
#include <thread>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/telemetry.h"

namespace gpuscope::telemetry {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

std::string telemetry_fixture(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURES) + "/telemetry/" + name;
}

class SamplerTest : public gpuscope::testing::FakeNvmlTest {
 protected:
  void load_telemetry(const std::string& name) {
    ASSERT_EQ(0, gpuscope_fake_nvml_load_scenario_file(telemetry_fixture(name).c_str()))
        << gpuscope_fake_nvml_last_error();
  }
  std::unique_ptr<Sampler> open_sampler(SamplerOptions options = {}) {
    session_ = open();
    if (!session_) return nullptr;
    auto sampler = Sampler::open(*session_, options);
    EXPECT_TRUE(sampler.ok()) << sampler.status().to_string();
    return sampler.ok() ? std::move(sampler).value() : nullptr;
  }
  // Sets the fake's clock to `t` and takes a round stamped the same time.
  Tick at(Sampler& sampler, double t) {
    gpuscope_fake_nvml_set_time(t);
    return sampler.sample_at(sampler.origin() + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(t)));
  }
  std::unique_ptr<nvml::Session> session_;
};

const GpuSample& gpu(const Tick& tick, unsigned index) {
  for (const GpuSample& s : tick.gpus) {
    if (s.gpu == index) return s;
  }
  ADD_FAILURE() << "no sample of GPU " << index;
  static const GpuSample none;
  return none;
}

TEST_F(SamplerTest, ReadingsAreInSiUnitsAndFractions) {
  load_telemetry("two_gpus.json");
  auto sampler = open_sampler();
  ASSERT_NE(sampler, nullptr);
  ASSERT_EQ(sampler->gpus().size(), 2u);
  EXPECT_EQ(sampler->gpus()[0].target.name, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(sampler->gpus()[0].gpm);
  EXPECT_FALSE(sampler->gpus()[1].gpm);
  EXPECT_EQ(sampler->gpus()[0].power_limit_w, 700.0);

  const Tick tick = at(*sampler, 1.5);
  const MetricValues& v = gpu(tick, 0).values;
  EXPECT_EQ(v.get(Metric::power_w), 500.0);
  EXPECT_EQ(v.get(Metric::power_instant_w), 500.0);
  EXPECT_EQ(v.get(Metric::power_average_w), 300.0);  // mean over [0.5, 1.5]: half at 100 W
  EXPECT_EQ(v.get(Metric::gpu_utilization), 1.0);
  EXPECT_EQ(v.get(Metric::memory_utilization), 0.4);
  EXPECT_EQ(v.get(Metric::sm_clock_hz), 1980e6);
  EXPECT_EQ(v.get(Metric::memory_clock_hz), 2619e6);
  EXPECT_EQ(v.get(Metric::memory_used_bytes), 42949672960.0);
  EXPECT_EQ(v.get(Metric::memory_total_bytes), 85520809984.0);
  EXPECT_EQ(v.get(Metric::temperature_c), 60.0);
  EXPECT_EQ(v.get(Metric::memory_temperature_c), 40.0);
  EXPECT_EQ(v.get(Metric::pcie_tx_bytes_per_s), 1e6);  // 1000 KB/s
  EXPECT_EQ(v.get(Metric::ecc_corrected_errors), 3.0);
  EXPECT_EQ(v.get(Metric::nvlink_tx_bytes), 1.5 * 1024 * 1024);  // 1.5 s x 1024 KiB/s
  // Energy: the counter (mJ offset) plus the integral of power: 100 W for 1 s + 500 W for 0.5 s.
  EXPECT_THAT(*v.get(Metric::energy_j), DoubleNear(1000.0 + 100 + 250, 1e-3));
  EXPECT_FALSE(v.has(Metric::fan_speed));  // this GPU has no fan: absent, not 0

  const MetricValues& a100 = gpu(tick, 1).values;
  EXPECT_EQ(a100.get(Metric::fan_speed), 0.4);
  EXPECT_FALSE(a100.has(Metric::energy_j));
  EXPECT_FALSE(a100.has(Metric::sm_activity));
}

TEST_F(SamplerTest, GpmPairsAreAtLeast100MsApart) {
  load_telemetry("two_gpus.json");
  auto sampler = open_sampler();
  ASSERT_NE(sampler, nullptr);
  const Tick first = at(*sampler, 1.0);
  EXPECT_FALSE(gpu(first, 0).values.has(Metric::sm_activity));  // the first sample of a pair
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlGpmSampleGet"), 1);
  const Tick soon = at(*sampler, 1.05);
  EXPECT_FALSE(gpu(soon, 0).gpm_interval_s.has_value());
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlGpmSampleGet"), 1);  // not taken: too soon
  const Tick later = at(*sampler, 1.1);
  const GpuSample& s = gpu(later, 0);
  ASSERT_TRUE(s.gpm_interval_s.has_value());
  EXPECT_THAT(*s.gpm_interval_s, DoubleNear(0.1, 1e-9));
  EXPECT_THAT(*s.values.get(Metric::sm_activity), DoubleNear(0.8, 1e-9));
  EXPECT_THAT(*s.values.get(Metric::tensor_activity), DoubleNear(0.5, 1e-9));
  EXPECT_THAT(*s.values.get(Metric::sm_occupancy), DoubleNear(0.4, 1e-9));
  EXPECT_THAT(*s.values.get(Metric::fp16_activity), DoubleNear(0.1, 1e-9));
  EXPECT_THAT(*s.values.get(Metric::graphics_activity), DoubleNear(0.9, 1e-9));
}

TEST_F(SamplerTest, SlowReadingsComeOnceASecond) {
  load_telemetry("two_gpus.json");
  auto sampler = open_sampler();
  ASSERT_NE(sampler, nullptr);
  const Tick t0 = at(*sampler, 1.2);
  ASSERT_TRUE(gpu(t0, 0).processes.has_value());
  ASSERT_EQ(gpu(t0, 0).processes->size(), 1u);
  const ProcessSample& p = gpu(t0, 0).processes->front();
  EXPECT_EQ(p.pid, 4242u);
  EXPECT_EQ(p.used_memory_bytes, 42949672960u);
  EXPECT_EQ(p.sm_utilization, 0.95);
  EXPECT_EQ(gpu(t0, 1).values.get(Metric::fan_speed), 0.4);
  const Tick t1 = at(*sampler, 1.7);
  EXPECT_FALSE(gpu(t1, 0).processes.has_value());
  EXPECT_FALSE(gpu(t1, 1).values.has(Metric::fan_speed));
  const Tick t2 = at(*sampler, 2.25);
  ASSERT_TRUE(gpu(t2, 0).processes.has_value());
  // The driver has no newer utilization sample: the last one is kept.
  EXPECT_EQ(gpu(t2, 0).processes->front().sm_utilization, 0.95);
}

TEST_F(SamplerTest, ALostGpuIsMarkedOnceAndTheOthersGoOn) {
  load_telemetry("two_gpus.json");
  auto sampler = open_sampler();
  ASSERT_NE(sampler, nullptr);
  EXPECT_EQ(at(*sampler, 2.9).gpus.size(), 2u);
  const Tick lost = at(*sampler, 3.1);
  ASSERT_EQ(lost.gpus.size(), 2u);
  EXPECT_TRUE(gpu(lost, 1).lost);
  EXPECT_FALSE(gpu(lost, 1).values.has(Metric::power_w));
  ASSERT_FALSE(gpu(lost, 1).problems.empty());
  EXPECT_THAT(gpu(lost, 1).problems.front(), HasSubstr("GPU is lost"));
  EXPECT_FALSE(gpu(lost, 0).lost);
  const Tick after = at(*sampler, 3.5);
  ASSERT_EQ(after.gpus.size(), 1u);  // GPU 1 is no longer asked
  EXPECT_EQ(after.gpus[0].gpu, 0u);
  EXPECT_FALSE(sampler->all_lost());
}

TEST_F(SamplerTest, ChoosesGpusByIndexOrUuidAndRejectsUnknownOnes) {
  load_telemetry("two_gpus.json");
  auto session = open();
  ASSERT_NE(session, nullptr);
  SamplerOptions by_uuid;
  by_uuid.gpus = {"GPU-55555555-6666-7777-8888-999999999999", "1"};
  auto sampler = Sampler::open(*session, by_uuid);
  ASSERT_TRUE(sampler.ok()) << sampler.status().to_string();
  ASSERT_EQ((*sampler)->gpus().size(), 1u);  // the same GPU twice counts once
  EXPECT_EQ((*sampler)->gpus()[0].target.gpu_index, 1u);

  SamplerOptions missing;
  missing.gpus = {"7"};
  auto none = Sampler::open(*session, missing);
  EXPECT_EQ(none.code(), Code::invalid_argument);
  EXPECT_THAT(none.status().message(), HasSubstr("there is no GPU 7"));

  SamplerOptions too_fast;
  too_fast.interval = std::chrono::milliseconds(5);
  EXPECT_EQ(Sampler::open(*session, too_fast).code(), Code::invalid_argument);
}

TEST_F(SamplerTest, UnsupportedReadingsAreAbsentAndNotAskedAgain) {
  load_json(R"({"devices": [{"name": "NVIDIA T4", "unsupported": ["nvmlDeviceGetUtilizationRates"],
      "timeline": [{"t": 0, "power_mw": 30000, "gpu_temp_c": 40}]}]})");
  auto sampler = open_sampler();
  ASSERT_NE(sampler, nullptr);
  const Tick a = at(*sampler, 0.5);
  const GpuSample& s = gpu(a, 0);
  EXPECT_EQ(s.values.get(Metric::power_w), 30.0);
  EXPECT_FALSE(s.values.has(Metric::gpu_utilization));
  EXPECT_FALSE(s.values.has(Metric::sm_clock_hz));
  EXPECT_TRUE(s.problems.empty());  // not supported is not a problem
  at(*sampler, 0.6);
  at(*sampler, 0.7);
  EXPECT_EQ(gpuscope_fake_nvml_call_count("nvmlDeviceGetUtilizationRates"), 1);
}

TEST_F(SamplerTest, TheThreadKeepsItsCadenceAndPairsGpmOnSchedule) {
  load_telemetry("two_gpus.json");
  SamplerOptions options;
  options.interval = std::chrono::milliseconds(20);
  auto sampler = open_sampler(options);
  ASSERT_NE(sampler, nullptr);
  std::mutex mutex;
  std::vector<Tick> ticks;
  sampler->start([&](Tick&& t) {
    std::lock_guard lock(mutex);
    ticks.push_back(std::move(t));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  sampler->stop();
  std::lock_guard lock(mutex);
  // 600 ms at 20 ms: ~30 rounds (a loaded CI machine may skip some, and says so).
  std::uint64_t missed = 0;
  for (const Tick& t : ticks) missed += t.missed_before;
  EXPECT_GE(ticks.size() + missed, 25u);
  EXPECT_LE(ticks.size(), 33u);
  int gpm_pairs = 0;
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    EXPECT_GT(ticks[i].t_s, ticks[i - 1].t_s);
    EXPECT_EQ(ticks[i].index, ticks[i - 1].index + 1);
    const GpuSample& s = gpu(ticks[i], 0);
    if (s.gpm_interval_s) {
      ++gpm_pairs;
      EXPECT_GE(*s.gpm_interval_s, 0.1 - 1e-9);  // never closer than GPM's minimum
      EXPECT_LT(*s.gpm_interval_s, 0.3);         // and taken soon after it is due
    }
  }
  EXPECT_GE(gpm_pairs, 3);
  for (const Tick& t : ticks) EXPECT_GT(t.cpu_s, 0.0);  // its own cost is measured each round
}

TEST_F(SamplerTest, ExpensiveReadingsMoveToTheOnceASecondRounds) {
  load_telemetry("two_gpus.json");
  SamplerOptions options;
  options.slow_reading_threshold_s = 0;  // every call counts as expensive here
  auto sampler = open_sampler(options);
  ASSERT_NE(sampler, nullptr);
  for (int i = 0; i < 6; ++i) at(*sampler, 1.0 + 0.1 * i);  // five calls judge each reading
  const Tick fast = at(*sampler, 1.65);                     // not a once-a-second round
  const GpuSample& s = gpu(fast, 0);
  EXPECT_FALSE(s.values.has(Metric::power_w));
  EXPECT_FALSE(s.values.has(Metric::memory_used_bytes));
  EXPECT_TRUE(s.values.has(Metric::sm_activity));  // GPM keeps its pairs
  const Tick slow = at(*sampler, 2.1);
  EXPECT_TRUE(gpu(slow, 0).values.has(Metric::power_w));
  bool moved = false;
  for (const ReadingCost& c : sampler->reading_costs()) {
    if (c.name == "power") {
      moved = c.once_a_second;
      EXPECT_GE(c.calls, 6u);
    }
    if (c.name == "gpm") {
      EXPECT_FALSE(c.once_a_second);
    }
  }
  EXPECT_TRUE(moved);
}

// What gpuscope bench asks for (bench::detail::row_sampler_options): nothing is moved, however
// much its calls cost, so a row of under 2 s still has its energy readings.
TEST_F(SamplerTest, AnInfiniteThresholdMovesNothing) {
  load_telemetry("two_gpus.json");
  SamplerOptions options;
  options.slow_reading_threshold_s = std::numeric_limits<double>::infinity();
  auto sampler = open_sampler(options);
  ASSERT_NE(sampler, nullptr);
  for (int i = 0; i < 6; ++i) at(*sampler, 1.0 + 0.1 * i);
  const Tick fast = at(*sampler, 1.65);  // not a once-a-second round
  EXPECT_TRUE(gpu(fast, 0).values.has(Metric::power_w));
  EXPECT_TRUE(gpu(fast, 0).values.has(Metric::memory_used_bytes));
  for (const ReadingCost& c : sampler->reading_costs()) EXPECT_FALSE(c.once_a_second) << c.name;
}

}  // namespace
}  // namespace gpuscope::telemetry
