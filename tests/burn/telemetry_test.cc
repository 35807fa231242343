// burn's telemetry against the fake NVML: the new NVML readings (throttle counters, GPM), the
// sampler on scripted timelines (whole GPUs and MIG instances), and a GPU that is lost.
#include "burn/telemetry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "../support/fake_nvml_fixture.h"

namespace gpuscope::burn::detail {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class BurnTelemetry : public gpuscope::testing::FakeNvmlTest {
 protected:
  void SetUp() override {
    FakeNvmlTest::SetUp();
    origin_ = Clock::now();
  }
  // Moves the fake's clock to `t` and samples, stamped the same `t`.
  void sample(TelemetrySampler& sampler, double t) {
    gpuscope_fake_nvml_set_time(t);
    sampler.sample_at(
        origin_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t)));
  }
  Clock::time_point origin_;
};

TEST_F(BurnTelemetry, ThrottleCountersComeFromFieldValues) {
  load("h100_sxm.json");
  auto session = open();
  gpuscope_fake_nvml_set_time(4.0);
  auto device = session->device_by_index(0);
  ASSERT_TRUE(device.ok());
  auto counters = device->throttle_time_ns();
  ASSERT_TRUE(counters.ok()) << counters.status().to_string();
  // The timeline sets the power-cap bit (4) from t = 3.0 to 3.5.
  EXPECT_EQ(counters->at(nvml::ThrottleReason::sw_power_cap), 500'000'000u);
  EXPECT_EQ(counters->at(nvml::ThrottleReason::sw_thermal), 0u);
  EXPECT_EQ(counters->at(nvml::ThrottleReason::hw_thermal), 0u);
  EXPECT_EQ(counters->at(nvml::ThrottleReason::hw_power_brake), 0u);
  EXPECT_FALSE(counters->contains(nvml::ThrottleReason::hw_slowdown));  // NVML has no counter
  EXPECT_EQ(nvml::throttle_reason_name(nvml::ThrottleReason::hw_thermal), "hw_thermal_slowdown");
  EXPECT_EQ(nvml::throttle_reason_bit(nvml::ThrottleReason::sw_power_cap), 4u);
}

TEST_F(BurnTelemetry, UnsupportedThrottleFieldsAreAbsent) {
  load_json(R"({"devices": [{"name": "NVIDIA H100 80GB HBM3", "unsupported_fields": [269, 75],
      "timeline": [{"t": 0, "clock_event_reasons": 32}]}]})");
  auto session = open();
  gpuscope_fake_nvml_set_time(2.0);
  auto counters = session->device_by_index(0)->throttle_time_ns();
  ASSERT_TRUE(counters.ok());
  EXPECT_FALSE(counters->contains(nvml::ThrottleReason::sw_thermal));
  EXPECT_EQ(counters->at(nvml::ThrottleReason::hw_thermal), 0u);
}

TEST_F(BurnTelemetry, GpmSamplerNeedsTwoSamplesAtLeast100msApart) {
  load("h100_sxm.json");
  auto session = open();
  auto device = session->device_by_index(0);
  auto sampler = nvml::GpmSampler::open(*device);
  ASSERT_TRUE(sampler.ok()) << sampler.status().to_string();
  const auto t0 = Clock::now();
  gpuscope_fake_nvml_set_time(1.0);
  auto first = (*sampler)->sample(t0);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(*first);
  auto too_soon = (*sampler)->sample(t0 + std::chrono::milliseconds(50));
  ASSERT_TRUE(too_soon.ok());
  EXPECT_FALSE(*too_soon);
  gpuscope_fake_nvml_set_time(3.0);
  auto metrics = (*sampler)->sample(t0 + std::chrono::seconds(2));
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  ASSERT_TRUE(*metrics);
  EXPECT_DOUBLE_EQ((*metrics)->interval_seconds, 2.0);
  EXPECT_NEAR(*(*metrics)->sm_activity, 0.90, 1e-9);  // 85 % over [1, 2), 95 % over [2, 3)
  EXPECT_NEAR(*(*metrics)->tensor_activity, 0.70, 1e-9);
  EXPECT_NEAR(*(*metrics)->dram_activity, 0.385, 1e-9);
}

TEST_F(BurnTelemetry, GpmIsNotSupportedBeforeHopper) {
  load("a100_mig.json");
  auto session = open();
  auto sampler = nvml::GpmSampler::open(*session->device_by_index(0), 1u);
  EXPECT_EQ(sampler.code(), Code::not_supported);
}

TEST_F(BurnTelemetry, SamplesEveryReadingOfAGpu) {
  load("h100_sxm.json");
  auto session = open();
  TelemetrySampler sampler(*session, {{0, true, {}}}, origin_);
  for (double t : {0.5, 1.5, 2.5, 3.25, 4.0}) sample(sampler, t);
  const std::vector<GpuTelemetry>& telemetry = sampler.telemetry();
  ASSERT_EQ(telemetry.size(), 1u);
  const GpuTelemetry& g = telemetry[0];
  EXPECT_TRUE(g.problems.empty()) << g.problems.front();
  ASSERT_EQ(g.samples.size(), 5u);
  const TelemetrySample& s = g.samples[3];  // t = 3.25: pinned at the power cap
  EXPECT_DOUBLE_EQ(s.t, 3.25);
  EXPECT_DOUBLE_EQ(*s.power_w, 698.0);
  EXPECT_DOUBLE_EQ(*s.temperature_c, 60.0);
  EXPECT_DOUBLE_EQ(*s.sm_clock_hz, 1755e6);
  EXPECT_EQ(s.clock_event_reasons, 4u);
  EXPECT_EQ(s.throttle_ns.at(nvml::ThrottleReason::sw_power_cap), 250'000'000u);
  ASSERT_TRUE(s.energy_j);
  EXPECT_GT(*s.energy_j, *g.samples[2].energy_j);
  ASSERT_TRUE(g.gpm.contains(std::nullopt));
  EXPECT_EQ(g.gpm.at(std::nullopt).size(), 4u);  // one per pair of samples
  const GpmInterval& interval = g.gpm.at(std::nullopt)[1];
  EXPECT_DOUBLE_EQ(interval.t0, 1.5);
  EXPECT_DOUBLE_EQ(interval.t1, 2.5);
  EXPECT_NEAR(*interval.metrics.tensor_activity, 0.70, 1e-9);
}

TEST_F(BurnTelemetry, SamplesGpmPerMigInstance) {
  load_json(R"({"devices": [{"name": "NVIDIA H100 80GB HBM3", "gpm_supported": true,
      "mig": {"current": true, "pending": true, "max_device_count": 7, "instances": [
        {"gpu_instance_id": 1, "compute_instance_id": 0, "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
         "uuid": "MIG-11111111-1111-1111-1111-111111111111", "memory_total_bytes": 42000000000, "sm_count": 60},
        {"gpu_instance_id": 2, "compute_instance_id": 0, "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
         "uuid": "MIG-22222222-2222-2222-2222-222222222222", "memory_total_bytes": 42000000000, "sm_count": 60}]},
      "timeline": [{"t": 0, "power_mw": 300000, "gpm": {"sm_util": 50, "any_tensor_util": 40}}]}]})");
  auto session = open();
  TelemetrySampler sampler(*session, {{0, true, {1, 2}}}, origin_);
  sample(sampler, 0.0);
  sample(sampler, 1.0);
  const GpuTelemetry& g = sampler.telemetry()[0];
  EXPECT_TRUE(g.problems.empty()) << g.problems.front();
  ASSERT_EQ(g.gpm.size(), 2u);
  EXPECT_NEAR(*g.gpm.at(1u).at(0).metrics.tensor_activity, 0.40, 1e-9);
  EXPECT_NEAR(*g.gpm.at(2u).at(0).metrics.sm_activity, 0.50, 1e-9);
  EXPECT_GE(gpuscope_fake_nvml_call_count("nvmlGpmMigSampleGet"), 4);
}

TEST_F(BurnTelemetry, PlansOneSampledGpuPerPhysicalGpu) {
  Plan plan;
  Target a;
  a.gpu_index = 0;
  a.gpm_supported = true;
  a.mig = MigSlice{5, 0, "2g.10gb", "", "MIG-a", {}, {}};
  Target b = a;
  b.mig->gpu_instance_id = 1;
  Target c;
  c.gpu_index = 1;
  plan.targets = {a, b, c};
  const std::vector<SampledGpu> gpus = sampled_gpus(plan);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].gpu_index, 0u);
  EXPECT_TRUE(gpus[0].gpm);
  EXPECT_EQ(gpus[0].mig_gpu_instances, (std::vector<unsigned>{1, 5}));
  EXPECT_TRUE(gpus[1].mig_gpu_instances.empty());
}

TEST_F(BurnTelemetry, ALostGpuIsNotedAndNoLongerSampled) {
  load("two_gpus_one_lost.json");
  auto session = open();
  TelemetrySampler sampler(*session, {{0, false, {}}, {1, false, {}}}, origin_);
  sample(sampler, 0.5);
  sample(sampler, 1.5);
  sample(sampler, 2.5);
  const auto& telemetry = sampler.telemetry();
  EXPECT_EQ(telemetry[0].samples.size(), 3u);
  EXPECT_TRUE(telemetry[0].problems.empty());
  EXPECT_EQ(telemetry[1].samples.size(), 1u);  // none once it is lost
  ASSERT_EQ(telemetry[1].problems.size(), 1u);
  EXPECT_THAT(telemetry[1].problems[0], HasSubstr("gpu_lost"));
}

TEST_F(BurnTelemetry, SamplesOnAThreadUntilStopped) {
  load("h100_sxm.json");
  auto session = open();
  TelemetrySampler sampler(*session, {{0, false, {}}}, Clock::now());
  sampler.start(0.02);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  sampler.stop();
  const auto& samples = sampler.telemetry()[0].samples;
  EXPECT_GE(samples.size(), 4u);
  EXPECT_LE(samples.size(), 12u);
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_GT(samples[i].t, samples[i - 1].t);
}

}  // namespace
}  // namespace gpuscope::burn::detail
