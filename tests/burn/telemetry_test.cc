// burn's telemetry against the fake NVML: the NVML readings it needs (throttle counters, GPM),
// the shared sampler on scripted timelines (whole GPUs and MIG instances), and a GPU that is
// lost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/telemetry.h"

namespace gpuscope::burn::detail {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class BurnTelemetry : public gpuscope::testing::FakeNvmlTest {};

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

// burn samples through the shared sampler (telemetry::Sampler), at its own interval.
class BurnSampling : public BurnTelemetry {
 protected:
  std::unique_ptr<telemetry::Sampler> open_sampler(std::vector<std::string> gpus) {
    telemetry::SamplerOptions o;
    o.gpus = std::move(gpus);
    o.processes = false;
    auto sampler = telemetry::Sampler::open(*session_, o);
    EXPECT_TRUE(sampler.ok()) << sampler.status().to_string();
    return sampler.ok() ? std::move(sampler).value() : nullptr;
  }
  // Moves the fake's clock to `t` and takes a round stamped the same `t`.
  std::vector<telemetry::GpuSample> sample(telemetry::Sampler& sampler, double t) {
    gpuscope_fake_nvml_set_time(t);
    return sampler
        .sample_at(sampler.origin() +
                   std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t)))
        .gpus;
  }
  std::unique_ptr<nvml::Session> session_;
};

TEST_F(BurnSampling, SamplesEveryReadingOfAGpu) {
  load("h100_sxm.json");
  session_ = open();
  auto sampler = open_sampler({"0"});
  ASSERT_NE(sampler, nullptr);
  std::vector<telemetry::GpuSample> samples;
  for (double t : {0.5, 1.5, 2.5, 3.25, 4.0}) {
    for (auto& s : sample(*sampler, t)) samples.push_back(std::move(s));
  }
  ASSERT_EQ(samples.size(), 5u);
  for (const auto& s : samples) EXPECT_TRUE(s.problems.empty()) << s.problems.front();
  using telemetry::Metric;
  const telemetry::MetricValues& s = samples[3].values;  // t = 3.25: pinned at the power cap
  EXPECT_DOUBLE_EQ(samples[3].t_s, 3.25);
  EXPECT_DOUBLE_EQ(*s.get(Metric::power_w), 698.0);
  EXPECT_DOUBLE_EQ(*s.get(Metric::temperature_c), 60.0);
  EXPECT_DOUBLE_EQ(*s.get(Metric::sm_clock_hz), 1755e6);
  EXPECT_EQ(s.get(Metric::clock_event_reasons), 4u);
  EXPECT_DOUBLE_EQ(*s.get(Metric::throttle_sw_power_cap_s), 0.25);
  ASSERT_TRUE(s.get(Metric::energy_j));
  EXPECT_GT(*s.get(Metric::energy_j), *samples[2].values.get(Metric::energy_j));
  int gpm = 0;
  for (const auto& x : samples) gpm += x.gpm_interval_s ? 1 : 0;
  EXPECT_EQ(gpm, 4);                                  // one per pair of samples
  EXPECT_DOUBLE_EQ(*samples[2].gpm_interval_s, 1.0);  // (1.5, 2.5]
  EXPECT_NEAR(*samples[2].values.get(Metric::tensor_activity), 0.70, 1e-9);
}

constexpr const char* kH100Mig =
    R"({"devices": [{"name": "NVIDIA H100 80GB HBM3", "gpm_supported": true,
      "mig": {"current": true, "pending": true, "max_device_count": 7, "instances": [
        {"gpu_instance_id": 1, "compute_instance_id": 0, "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
         "uuid": "MIG-11111111-1111-1111-1111-111111111111", "memory_total_bytes": 42000000000, "sm_count": 60},
        {"gpu_instance_id": 2, "compute_instance_id": 0, "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
         "uuid": "MIG-22222222-2222-2222-2222-222222222222", "memory_total_bytes": 42000000000, "sm_count": 60}]},
      "timeline": [{"t": 0, "power_mw": 300000, "gpm": {"sm_util": 50, "any_tensor_util": 40}}]}]})";

TEST_F(BurnSampling, SamplesGpmPerMigInstance) {
  load_json(kH100Mig);
  session_ = open();
  auto sampler = open_sampler(
      {"MIG-11111111-1111-1111-1111-111111111111", "MIG-22222222-2222-2222-2222-222222222222"});
  ASSERT_NE(sampler, nullptr);
  sample(*sampler, 0.0);
  const std::vector<telemetry::GpuSample> second = sample(*sampler, 1.0);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_TRUE(second[0].problems.empty()) << second[0].problems.front();
  ASSERT_EQ(second[0].instances.size(), 2u);
  using telemetry::Metric;
  EXPECT_EQ(second[0].instances[0].gpu_instance_id, 1u);
  EXPECT_NEAR(*second[0].instances[0].values.get(Metric::tensor_activity), 0.40, 1e-9);
  EXPECT_NEAR(*second[0].instances[1].values.get(Metric::sm_activity), 0.50, 1e-9);
  EXPECT_FALSE(second[0].gpm_interval_s);  // no GPM for the whole GPU beside its instances
  EXPECT_GE(gpuscope_fake_nvml_call_count("nvmlGpmMigSampleGet"), 4);
}

TEST_F(BurnSampling, SamplesOneGpuPerPhysicalGpu) {
  load_json(kH100Mig);
  session_ = open();
  auto sampler = open_sampler({"MIG-22222222-2222-2222-2222-222222222222",
                               "MIG-11111111-1111-1111-1111-111111111111", "0"});
  ASSERT_NE(sampler, nullptr);
  ASSERT_EQ(sampler->gpus().size(), 1u);
  EXPECT_EQ(sampler->gpus()[0].target.gpu_index, 0u);
  EXPECT_TRUE(sampler->gpus()[0].gpm);
  ASSERT_EQ(sampler->gpus()[0].instances.size(), 2u);
  EXPECT_EQ(sampler->gpus()[0].instances[0].mig->gpu_instance_id, 1u);
  EXPECT_EQ(sampler->gpus()[0].instances[1].mig->gpu_instance_id, 2u);
}

TEST_F(BurnSampling, ALostGpuIsNotedAndNoLongerSampled) {
  load("two_gpus_one_lost.json");
  session_ = open();
  auto sampler = open_sampler({});
  ASSERT_NE(sampler, nullptr);
  std::map<unsigned, std::vector<telemetry::GpuSample>> by_gpu;
  for (double t : {0.5, 1.5, 2.5}) {
    for (auto& s : sample(*sampler, t)) by_gpu[s.gpu].push_back(std::move(s));
  }
  EXPECT_EQ(by_gpu[0].size(), 3u);
  for (const auto& s : by_gpu[0]) EXPECT_TRUE(s.problems.empty());
  ASSERT_EQ(by_gpu[1].size(), 2u);  // one sample, then the one saying it is lost; none after
  EXPECT_FALSE(by_gpu[1][0].lost);
  EXPECT_TRUE(by_gpu[1][1].lost);
  ASSERT_EQ(by_gpu[1][1].problems.size(), 1u);
  EXPECT_THAT(by_gpu[1][1].problems[0], HasSubstr("lost"));
}

TEST_F(BurnSampling, SamplesOnAThreadUntilStopped) {
  load("h100_sxm.json");
  session_ = open();
  telemetry::SamplerOptions o;
  o.interval = std::chrono::milliseconds(20);
  auto sampler = telemetry::Sampler::open(*session_, o);
  ASSERT_TRUE(sampler.ok());
  std::vector<double> t;
  (*sampler)->start([&](telemetry::Tick&& tick) { t.push_back(tick.t_s); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  (*sampler)->stop();
  EXPECT_GE(t.size(), 4u);
  EXPECT_LE(t.size(), 12u);
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_GT(t[i], t[i - 1]);
}

}  // namespace
}  // namespace gpuscope::burn::detail
