#include "burn/telemetry.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpuscope::burn::detail {

struct TelemetrySampler::Gpu {
  SampledGpu what;
  std::optional<nvml::Device> device;
  std::unique_ptr<nvml::GpmSampler> whole_gpu_gpm;
  std::map<unsigned, std::unique_ptr<nvml::GpmSampler>> instance_gpm;
  bool lost = false;
  std::set<std::string> noted;  // problems already reported, by reading
};

namespace {

double seconds_between(std::chrono::steady_clock::time_point from,
                       std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

std::vector<SampledGpu> sampled_gpus(const Plan& plan) {
  std::vector<SampledGpu> gpus;
  for (const Target& t : plan.targets) {
    auto it = std::find_if(gpus.begin(), gpus.end(),
                           [&](const SampledGpu& g) { return g.gpu_index == t.gpu_index; });
    if (it == gpus.end()) {
      gpus.push_back({t.gpu_index, t.gpm_supported, {}});
      it = gpus.end() - 1;
    }
    if (t.mig) it->mig_gpu_instances.push_back(t.mig->gpu_instance_id);
  }
  for (SampledGpu& g : gpus) {
    std::sort(g.mig_gpu_instances.begin(), g.mig_gpu_instances.end());
    g.mig_gpu_instances.erase(std::unique(g.mig_gpu_instances.begin(), g.mig_gpu_instances.end()),
                              g.mig_gpu_instances.end());
  }
  return gpus;
}

TelemetrySampler::TelemetrySampler(const nvml::Session& session, std::vector<SampledGpu> gpus,
                                   std::chrono::steady_clock::time_point origin)
    : origin_(origin) {
  for (SampledGpu& what : gpus) {
    auto gpu = std::make_unique<Gpu>();
    GpuTelemetry record;
    record.gpu_index = what.gpu_index;
    Result<nvml::Device> device = session.device_by_index(what.gpu_index);
    if (device.ok()) {
      gpu->device = *device;
      if (what.gpm) {
        // A GPM sampler per MIG GPU instance, since instances run different workers.
        auto open = [&](std::optional<unsigned> instance) -> std::unique_ptr<nvml::GpmSampler> {
          Result<std::unique_ptr<nvml::GpmSampler>> sampler =
              nvml::GpmSampler::open(*gpu->device, instance);
          if (sampler.ok()) return std::move(sampler).value();
          if (sampler.code() != Code::not_supported) {
            record.problems.push_back("GPM: " + sampler.status().to_string());
          }
          return nullptr;
        };
        if (what.mig_gpu_instances.empty()) {
          gpu->whole_gpu_gpm = open(std::nullopt);
        } else {
          for (unsigned instance : what.mig_gpu_instances) {
            if (auto s = open(instance)) gpu->instance_gpm.emplace(instance, std::move(s));
          }
        }
      }
    } else {
      record.problems.push_back(device.status().to_string());
    }
    gpu->what = std::move(what);
    gpus_.push_back(std::move(gpu));
    telemetry_.push_back(std::move(record));
  }
}

TelemetrySampler::~TelemetrySampler() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
}

void TelemetrySampler::sample_at(std::chrono::steady_clock::time_point now) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& gpu = *gpus_[i];
    GpuTelemetry& record = telemetry_[i];
    if (!gpu.device || gpu.lost) continue;
    const nvml::Device& d = *gpu.device;

    // Unsupported readings stay absent; a failure is noted once; a lost GPU stops the sampling.
    auto keep = [&](const char* reading, auto result, auto& out, double scale = 1.0) {
      if (gpu.lost) return;  // noted once, with the reading that found it
      if (result.ok()) {
        out = static_cast<double>(*result) * scale;
      } else if (result.code() != Code::not_supported) {
        if (result.code() == Code::gpu_lost) gpu.lost = true;
        if (gpu.noted.insert(reading).second) {
          record.problems.push_back(fmt::format("{}: {}", reading, result.status().to_string()));
        }
      }
    };
    TelemetrySample s;
    s.t = seconds_between(origin_, now);
    keep("temperature", d.temperature_c(), s.temperature_c);
    keep("power", d.power_w(), s.power_w);
    keep("sm_clock", d.clock_mhz(nvml::ClockDomain::sm), s.sm_clock_hz, 1e6);
    keep("energy", d.total_energy_j(), s.energy_j);
    if (Result<std::uint64_t> reasons = d.clock_event_reasons(); reasons.ok()) {
      s.clock_event_reasons = *reasons;
    } else {
      std::optional<double> ignored;
      keep("clock_event_reasons", reasons, ignored);
    }
    if (auto counters = d.throttle_time_ns(); counters.ok()) {
      s.throttle_ns = *counters;
    } else {
      std::optional<double> ignored;
      keep("throttle_counters", Result<double>(counters.status()), ignored);
    }
    if (gpu.lost) continue;  // readings of a lost GPU are not a sample
    record.samples.push_back(std::move(s));

    auto sample_gpm = [&](std::optional<unsigned> instance, nvml::GpmSampler& sampler) {
      Result<std::optional<nvml::GpmMetrics>> metrics = sampler.sample(now);
      if (!metrics.ok()) {
        std::optional<double> ignored;
        keep("gpm", Result<double>(metrics.status()), ignored);
        return;
      }
      if (!*metrics) return;
      const double t = seconds_between(origin_, now);
      record.gpm[instance].push_back({t - (*metrics)->interval_seconds, t, **metrics});
    };
    if (gpu.whole_gpu_gpm) sample_gpm(std::nullopt, *gpu.whole_gpu_gpm);
    for (auto& [instance, sampler] : gpu.instance_gpm) sample_gpm(instance, *sampler);
  }
}

void TelemetrySampler::start(double interval_seconds) {
  stopping_ = false;
  thread_ = std::thread([this, interval_seconds] { loop(interval_seconds); });
}

void TelemetrySampler::loop(double interval_seconds) {
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(interval_seconds));
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    sample_at(std::chrono::steady_clock::now());
    lock.lock();
    next += interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval;  // sampling took longer than the interval
    wake_.wait_until(lock, next, [this] { return stopping_; });
  }
}

void TelemetrySampler::stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  sample_at(std::chrono::steady_clock::now());
}

}  // namespace gpuscope::burn::detail
