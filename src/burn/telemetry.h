// NVML telemetry while the workers run: one thread samples every GPU in the plan once per
// interval (temperature, power, SM clock, clock-event reasons and their time counters, the
// energy counter) and takes GPM samples per GPU, or per MIG GPU instance, on Hopper and newer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpuscope/burn.h"
#include "gpuscope/nvml.h"

namespace gpuscope::burn::detail {

struct TelemetrySample {
  double t = 0;  // seconds since the run's origin
  std::optional<double> temperature_c;
  std::optional<double> power_w;
  std::optional<double> sm_clock_hz;
  std::optional<double> energy_j;  // the NVML counter (since the driver loaded)
  std::optional<std::uint64_t> clock_event_reasons;
  std::map<nvml::ThrottleReason, std::uint64_t> throttle_ns;  // counters since the driver loaded
};

// GPM metrics over (t0, t1].
struct GpmInterval {
  double t0 = 0, t1 = 0;
  nvml::GpmMetrics metrics;
};

struct GpuTelemetry {
  unsigned gpu_index = 0;
  std::vector<TelemetrySample> samples;
  // Key: the MIG GPU instance id, or absent for the whole GPU.
  std::map<std::optional<unsigned>, std::vector<GpmInterval>> gpm;
  std::vector<std::string> problems;  // readings that failed (not merely unsupported), once each
};

// What to sample on one GPU.
struct SampledGpu {
  unsigned gpu_index = 0;
  bool gpm = false;
  std::vector<unsigned> mig_gpu_instances;  // GPM per instance; empty: the whole GPU
};

// Each GPU of the plan once, with the GPU instances of its MIG targets.
std::vector<SampledGpu> sampled_gpus(const Plan& plan);

class TelemetrySampler {
 public:
  // REQUIRES: `session` outlives the sampler, and no other thread uses NVML while it samples.
  TelemetrySampler(const nvml::Session& session, std::vector<SampledGpu> gpus,
                   std::chrono::steady_clock::time_point origin);
  ~TelemetrySampler();  // stops the thread if it runs
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  // One sample of every GPU, stamped `now` (tests pass the fake NVML's time).
  void sample_at(std::chrono::steady_clock::time_point now);

  // Samples now and then every `interval_seconds` on a thread, until stop().
  void start(double interval_seconds);
  // Stops the thread and takes a last sample, so that every span ends inside the samples.
  void stop();

  // The samples so far. REQUIRES: not running.
  const std::vector<GpuTelemetry>& telemetry() const { return telemetry_; }

 private:
  struct Gpu;
  void loop(double interval_seconds);

  std::chrono::steady_clock::time_point origin_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<GpuTelemetry> telemetry_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace gpuscope::burn::detail
