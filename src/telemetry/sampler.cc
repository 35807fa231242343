// The sampling thread: one round over every GPU per interval.
//
// Rounds are scheduled at start + k x interval. GPM pairs are formed on those scheduled times
// rather than on the moments the thread woke up: at a 100 ms interval the wake-up jitter (tens
// of microseconds either way) would otherwise put every other pair just under GPM's 100 ms
// minimum, and GPM would be read every 200 ms.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "gpuscope/clock.h"
#include "gpuscope/option_checks.h"
#include "gpuscope/target.h"
#include "gpuscope/telemetry.h"
#include "telemetry/gpu_reader.h"

namespace gpuscope::telemetry {
namespace {

using Clock = std::chrono::steady_clock;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

struct Sampler::State {
  SamplerOptions options;
  std::vector<SampledGpu> gpus;
  std::vector<std::unique_ptr<detail::GpuReader>> readers;
  Clock::time_point origin;
  double origin_unix_s = 0;
  std::optional<Clock::time_point> last_slow;
  std::uint64_t next_index = 0;

  std::thread thread;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::atomic<bool> all_lost{false};

  Tick round(Clock::time_point now, Clock::time_point scheduled, std::uint64_t missed);
  void loop(std::function<void(Tick&&)> on_tick);
};

Tick Sampler::State::round(Clock::time_point now, Clock::time_point scheduled,
                           std::uint64_t missed) {
  const double cpu0 = thread_cpu_seconds();
  const Clock::time_point wall0 = Clock::now();
  Tick tick;
  tick.index = next_index++;
  tick.t_s = std::chrono::duration<double>(now - origin).count();
  tick.unix_s = origin_unix_s + tick.t_s;
  tick.missed_before = missed;
  const bool slow = !last_slow || scheduled - *last_slow >= options.slow_interval;
  if (slow) last_slow = scheduled;
  bool any_alive = false;
  for (auto& reader : readers) {
    const bool was_lost = reader->lost();
    GpuSample sample = reader->read(tick.t_s, tick.unix_s, scheduled, slow);
    if (!was_lost || sample.lost) tick.gpus.push_back(std::move(sample));
    any_alive = any_alive || !reader->lost();
  }
  all_lost = !any_alive;
  tick.cpu_s = thread_cpu_seconds() - cpu0;
  tick.wall_s = std::chrono::duration<double>(Clock::now() - wall0).count();
  return tick;
}

void Sampler::State::loop(std::function<void(Tick&&)> on_tick) {
  const auto interval = std::chrono::duration_cast<Clock::duration>(options.interval);
  Clock::time_point scheduled = Clock::now();
  std::uint64_t missed = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex);
      if (wake.wait_until(lock, scheduled, [this] { return stopping; })) break;
    }
    on_tick(round(Clock::now(), scheduled, missed));
    missed = 0;
    scheduled += interval;
    const Clock::time_point now = Clock::now();
    while (scheduled <= now) {  // this round overran the next ones: skip and count them
      scheduled += interval;
      ++missed;
    }
  }
  // A last round, so that whatever ran until now ends inside the samples.
  const Clock::time_point now = Clock::now();
  on_tick(round(now, now, missed));
}

Sampler::Sampler(std::unique_ptr<State> state) : state_(std::move(state)) {}

Sampler::~Sampler() {
  stop();
}

Result<std::unique_ptr<Sampler>> Sampler::open(const nvml::Session& session,
                                               const SamplerOptions& options) {
  if (options.interval < kMinInterval) {
    return Status(Code::invalid_argument,
                  fmt::format("the sampling interval must be at least {} ms (asked: {} ms)",
                              kMinInterval.count(), options.interval.count()));
  }
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<Target> available, list_targets(session));
  auto chosen = resolve_targets(available, options.gpus, TargetUse::observe);
  // This function's contract: a GPU that does not exist is a wrong argument.
  if (!chosen.ok() && chosen.code() == Code::not_found) {
    return Status(Code::invalid_argument, chosen.status().message());
  }
  if (!chosen.ok()) return chosen.status();

  // One reader per GPU, in NVML order, sampling the whole GPU as list_targets() described it;
  // the MIG instances chosen on it get GPM of their own.
  std::vector<unsigned> gpus;
  std::map<unsigned, std::vector<Target>> instances;
  for (Target& t : *chosen) {
    if (std::find(gpus.begin(), gpus.end(), t.gpu_index) == gpus.end()) {
      gpus.push_back(t.gpu_index);
    }
    if (t.mig) instances[t.gpu_index].push_back(std::move(t));
  }
  auto state = std::make_unique<State>();
  state->options = options;
  for (unsigned index : gpus) {
    SampledGpu gpu;
    auto device = session.device_by_index(index);
    if (!device.ok() && device.code() == Code::gpu_lost) {
      // Lost before we started: say so in the first round, and sample the others.
      gpu.target.gpu_index = index;
      gpu.target.unavailable = device.status();
      state->readers.push_back(detail::GpuReader::lost_from_start(gpu));
      state->gpus.push_back(gpu);
      continue;
    }
    if (!device.ok()) return device.status();
    const auto whole = std::find_if(available.begin(), available.end(), [&](const Target& t) {
      return !t.mig && t.gpu_index == index;
    });
    if (whole == available.end()) {
      return Status(Code::internal, fmt::format("GPU {} is not among the GPUs NVML listed", index));
    }
    gpu.target = *whole;
    if (auto limit = device->enforced_power_limit_w(); limit.ok()) gpu.power_limit_w = *limit;
    std::unique_ptr<nvml::GpmSampler> gpm;
    std::map<unsigned, std::unique_ptr<nvml::GpmSampler>> instance_gpm;
    if (auto it = instances.find(index); it != instances.end()) {
      gpu.instances = it->second;
      for (const Target& t : it->second) {
        auto opened = nvml::GpmSampler::open(*device, t.mig->gpu_instance_id);
        if (opened.ok()) instance_gpm.emplace(t.mig->gpu_instance_id, std::move(opened).value());
      }
      gpu.gpm = !instance_gpm.empty();
    } else if (auto opened = nvml::GpmSampler::open(*device); opened.ok()) {
      gpm = std::move(opened).value();
      gpu.gpm = true;
    }
    state->gpus.push_back(gpu);
    state->readers.push_back(
        std::make_unique<detail::GpuReader>(*device, gpu, std::move(gpm), std::move(instance_gpm),
                                            options.processes, options.slow_reading_threshold_s));
  }
  state->origin = Clock::now();
  state->origin_unix_s = unix_now_s();
  return std::unique_ptr<Sampler>(new Sampler(std::move(state)));
}

const std::vector<SampledGpu>& Sampler::gpus() const {
  return state_->gpus;
}

const SamplerOptions& Sampler::options() const {
  return state_->options;
}

std::chrono::steady_clock::time_point Sampler::origin() const {
  return state_->origin;
}

double Sampler::origin_unix_s() const {
  return state_->origin_unix_s;
}

Tick Sampler::sample_at(std::chrono::steady_clock::time_point now) {
  return state_->round(now, now, 0);
}

void Sampler::start(std::function<void(Tick&&)> on_tick) {
  if (state_->thread.joinable()) return;
  state_->stopping = false;
  state_->thread = std::thread(
      [this, on_tick = std::move(on_tick)]() mutable { state_->loop(std::move(on_tick)); });
}

void Sampler::stop() {
  if (!state_ || !state_->thread.joinable()) return;
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  state_->thread.join();
}

std::vector<ReadingCost> Sampler::reading_costs() const {
  std::map<std::string, ReadingCost> merged;
  for (const auto& reader : state_->readers) {
    for (const ReadingCost& c : reader->costs()) {
      ReadingCost& m = merged[c.name];
      const std::uint64_t calls = m.calls + c.calls;
      m.name = c.name;
      m.mean_s = calls > 0 ? (m.mean_s * static_cast<double>(m.calls) +
                              c.mean_s * static_cast<double>(c.calls)) /
                                 static_cast<double>(calls)
                           : 0;
      m.calls = calls;
      m.once_a_second = m.once_a_second || c.once_a_second;
    }
  }
  std::vector<ReadingCost> out;
  for (auto& [name, cost] : merged) out.push_back(std::move(cost));
  return out;
}

bool Sampler::all_lost() const {
  return state_->all_lost;
}

}  // namespace gpuscope::telemetry
