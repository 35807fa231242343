// The sweep itself: checks, journal and guardian, then set -> verify -> warm up -> measure at
// each limit while one workload runs, then restore.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>
#include <tuple>

#include "common/guardian.h"
#include "gpuscope/clock.h"
#include "gpuscope/sweep.h"
#include "gpuscope/telemetry.h"
#include "sweep/journal.h"
#include "sweep/limit_guard.h"
#include "sweep/workload.h"

namespace gpuscope::sweep {
namespace {

using detail::JournalEntry;
using telemetry::Metric;

constexpr double kKneeFractions[] = {0.8, 0.9, 0.95};
// A measurement window waits this long at most (or this many --window) for a workload's line.
constexpr double kLongestWindowS = 60;
constexpr double kLongestWindowFactor = 10;

// SIGINT, SIGTERM and SIGHUP set a flag the sweep polls, while one of these lives; the previous
// handlers come back when it is destroyed.
class SignalWatch {
 public:
  SignalWatch() {
    received_ = 0;
    struct sigaction action {};
    action.sa_handler = [](int signal) { received_ = signal; };
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &old_[i]);
  }
  ~SignalWatch() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  static int received() { return received_; }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  static inline volatile std::sig_atomic_t received_ = 0;
  std::array<struct sigaction, 3> old_{};
};

// The samples of every swept GPU, appended by the sampler's thread.
class Recording {
 public:
  void add(telemetry::Tick&& tick) {
    std::lock_guard lock(mutex_);
    last_t_ = tick.t_s;
    for (telemetry::GpuSample& sample : tick.gpus) {
      if (sample.lost) lost_ = true;
      samples_[sample.gpu].push_back(std::move(sample));
    }
  }
  std::vector<telemetry::GpuSample> of(unsigned gpu) const {
    std::lock_guard lock(mutex_);
    const auto it = samples_.find(gpu);
    return it == samples_.end() ? std::vector<telemetry::GpuSample>{} : it->second;
  }
  double last_t() const {
    std::lock_guard lock(mutex_);
    return last_t_;
  }
  bool lost() const {
    std::lock_guard lock(mutex_);
    return lost_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<unsigned, std::vector<telemetry::GpuSample>> samples_;
  double last_t_ = -1;
  bool lost_ = false;
};

// A GPU being swept: its handle and what was there before.
struct SweptGpu {
  nvml::Device device;
  GpuPrior prior;
};

// A power limit (and a clock lock) belongs to a whole GPU: a MIG instance's selector names its
// GPU. A clock sweep needs the GPU's lockable clocks; its power limit is only reported.
Result<std::vector<SweptGpu>> resolve_gpus(const nvml::Session& session,
                                           const std::vector<std::string>& wanted, Knob knob) {
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<gpuscope::Target> available, list_targets(session));
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<gpuscope::Target> chosen,
                            resolve_targets(available, wanted, TargetUse::observe));
  std::vector<nvml::Device> devices;
  for (const gpuscope::Target& t : chosen) {
    if (!t.unavailable.ok()) return t.unavailable;
    GPUSCOPE_ASSIGN_OR_RETURN(nvml::Device device, session.device_by_index(t.gpu_index));
    if (std::none_of(devices.begin(), devices.end(),
                     [&](const nvml::Device& d) { return d.index() == device.index(); })) {
      devices.push_back(device);
    }
  }
  std::vector<SweptGpu> targets;
  for (const nvml::Device& device : devices) {
    GpuPrior prior;
    prior.index = device.index();
    prior.uuid = device.uuid().value_or("");
    prior.name = device.name().value_or("");
    auto range = device.power_limit_range_w();
    auto limit = device.power_limit_w();
    if (knob == Knob::locked_clocks) {
      auto clocks = device.supported_sm_clocks_mhz();
      if (!clocks.ok()) {
        const Status why = clocks.status();
        if (why.code() == Code::gpu_lost || why.code() == Code::permission_denied) return why;
        return Status(Code::not_supported,
                      fmt::format("GPU {} ({}): its SM clock cannot be locked on this GPU or "
                                  "driver (it needs Volta or newer): {}",
                                  prior.index, prior.name, why.message()));
      }
      prior.sm_clocks_mhz = *clocks;
      if (limit.ok()) prior.prior_limit_w = *limit;
      if (range.ok()) std::tie(prior.min_limit_w, prior.max_limit_w) = *range;
    } else if (!range.ok() || !limit.ok()) {
      const Status why = range.ok() ? limit.status() : range.status();
      if (why.code() == Code::gpu_lost || why.code() == Code::permission_denied) return why;
      return Status(Code::not_supported,
                    fmt::format("GPU {} ({}): its power limit cannot be set on this GPU or "
                                "driver: {}",
                                prior.index, prior.name, why.message()));
    }
    if (knob == Knob::power_limit) {
      prior.prior_limit_w = *limit;
      prior.min_limit_w = range->first;
      prior.max_limit_w = range->second;
    }
    if (auto default_limit = device.default_power_limit_w(); default_limit.ok()) {
      prior.default_limit_w = *default_limit;
    }
    targets.push_back({device, prior});
  }
  return targets;
}

Status check_options(const SweepOptions& o) {
  if (o.workloads.empty() || std::any_of(o.workloads.begin(), o.workloads.end(),
                                         [](const WorkloadSpec& w) { return w.command.empty(); })) {
    return Status(Code::invalid_argument,
                  "no workload: give a bench row (--model M --task T --mode P, or --preset seeds) "
                  "or a command after --, e.g. gpuscope sweep --allow-power-changes -- python "
                  "train.py (it prints {\"samples_per_second\": X} lines)");
  }
  if (!(o.window_s > 0) || o.warmup_s < 0 || o.cooldown_s < 0) {
    return Status(Code::invalid_argument,
                  "--window must be positive, --warmup and --cooldown "
                  "not negative");
  }
  if (o.min_windows < 2 || o.max_windows < o.min_windows) {
    return Status(Code::invalid_argument, "at least two windows per point are measured");
  }
  if (!o.dry_run && !o.allow_power_changes) {
    return Status(
        Code::invalid_argument,
        fmt::format("a sweep changes the GPUs' {}: add --allow-power-changes to let it "
                    "(they are restored afterwards in every case), or --dry-run to see "
                    "the plan and measure at the current setting without changing "
                    "anything",
                    o.knob == Knob::locked_clocks ? "SM clocks (a lock)" : "power limits"));
  }
  return {};
}

std::string privilege_hint(Knob knob) {
  return fmt::format(
      "{} needs root or CAP_SYS_ADMIN: run it as root (sudo gpuscope sweep ...). Nothing was "
      "changed",
      knob == Knob::locked_clocks ? "locking a GPU's SM clock" : "changing a GPU's power limit");
}

// The supported clock nearest to `mhz` (the higher of two as near); `mhz` without a list.
double nearest_clock(const std::vector<unsigned>& supported, double mhz) {
  std::optional<double> best;
  for (unsigned c : supported) {
    const double d = std::abs(c - mhz);
    if (!best || d < std::abs(*best - mhz) || (d == std::abs(*best - mhz) && c > *best)) best = c;
  }
  return best.value_or(mhz);
}

// The sweep's moving parts while it runs: the sampler for the whole sweep, and one workload
// process at a time.
class Sweeper {
 public:
  Sweeper(const SweepOptions& options, std::vector<SweptGpu>& targets, std::ostream& progress,
          SweepResult& result)
      : o_(options), targets_(targets), progress_(progress), result_(result) {}

  Status start(const nvml::Session& session) {
    telemetry::SamplerOptions sampling;
    const auto interval = std::chrono::milliseconds(std::clamp<long>(
        std::lround(o_.window_s * 1000 / 10), telemetry::kMinInterval.count(), 100));
    sampling.interval = interval;
    sampling.processes = false;
    // Every window needs its own energy readings: no reading moves to the once-a-second rounds
    // for its cost (the energy counter would then straddle the limit changes).
    sampling.slow_reading_threshold_s = 1.0;
    for (const SweptGpu& t : targets_) sampling.gpus.push_back(std::to_string(t.prior.index));
    auto sampler = telemetry::Sampler::open(session, sampling);
    if (!sampler.ok()) return sampler.status();
    sampler_ = std::move(sampler).value();
    sampler_->start([this](telemetry::Tick&& tick) { recording_.add(std::move(tick)); });
    return {};
  }

  // Starts the next workload; its points go to `into`.
  Status start_workload(WorkloadResult& into) {
    current_ = &into;
    progress_ << fmt::format("workload: {} ({})\n", into.spec.label, into.spec.unit);
    auto workload = detail::Workload::start(into.spec, sampler_->origin(), progress_);
    if (!workload.ok()) return workload.status();
    workload_ = std::move(workload).value();
    return {};
  }

  // Stops the current workload; when it ended on its own, says why in its result.
  void finish_workload(const Status& status) noexcept {
    if (workload_) workload_->stop();
    if (!status.ok() && stop_reason().ok()) {
      // The sweep goes on with the next workload; this one's end (or failed start) is recorded.
      const auto reason = workload_ ? workload_->skipped_reason() : std::nullopt;
      if (reason && current_->points.empty()) {
        current_->skipped = *reason;
      } else {
        std::string message = status.message();
        if (const auto error = workload_ ? workload_->error_message() : std::nullopt) {
          message += ": " + *error;
        }
        current_->ended = Status(status.code(), message);
      }
    }
    workload_.reset();
  }

  void stop() noexcept {
    if (workload_) workload_->stop();
    if (sampler_) sampler_->stop();
  }

  // Why the whole sweep must stop now (a signal, a lost GPU), or ok.
  Status stop_reason() const {
    if (const int signal = SignalWatch::received(); signal != 0) {
      return Status(Code::cancelled, fmt::format("stopped by {}", signal_name(signal)));
    }
    if (recording_.lost()) return Status(Code::gpu_lost, "a swept GPU stopped answering");
    return {};
  }

  // Why the current workload's sweep must stop now, or ok.
  Status interrupted() const {
    GPUSCOPE_RETURN_IF_ERROR(stop_reason());
    if (const auto exit = workload_->ended()) {
      return Status(Code::internal,
                    fmt::format("the workload ended ({}) before the sweep did", exit->describe()));
    }
    return {};
  }

  // Waits until the workload has printed its first speed (for up to start_timeout_s).
  Status wait_for_first_rate() const {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(o_.start_timeout_s);
    while (workload_->rates_between(-1, workload_->now_s() + 1).empty()) {
      GPUSCOPE_RETURN_IF_ERROR(interrupted());
      if (std::chrono::steady_clock::now() >= until) {
        return Status(Code::timeout,
                      fmt::format("the workload printed no {{\"samples_per_second\": X}} line in "
                                  "its first {:g} s",
                                  o_.start_timeout_s));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return {};
  }

  // Waits `seconds`, returning early with the reason to stop.
  Status wait(double seconds) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      GPUSCOPE_RETURN_IF_ERROR(interrupted());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return interrupted();
  }

  // Sets every GPU to `limit_w` (unless null: the dry run's current limit) and measures.
  // Fails only when the sweep must stop; a point that could not be measured is skipped.
  Status measure(std::optional<double> limit_w, bool refined) {
    const bool clocks = o_.knob == Knob::locked_clocks;
    const char* unit = knob_unit(o_.knob);
    Point point;
    point.value = limit_w.value_or(current_value());
    point.refined = refined;
    point.started_s = workload_->now_s();
    std::map<unsigned, double> enforced;
    for (const SweptGpu& t : targets_) {
      if (limit_w) {
        const auto mhz = static_cast<unsigned>(std::lround(*limit_w));
        const Status set = clocks ? t.device.set_locked_sm_clocks_mhz(mhz, mhz)
                                  : t.device.set_power_limit_w(*limit_w);
        if (set.code() == Code::gpu_lost) return set;
        if (!set.ok()) {
          point.skipped = fmt::format("GPU {}: setting {:.0f} {} failed: {}", t.prior.index,
                                      *limit_w, unit, set.message());
          break;
        }
      }
      const auto read_back = t.device.enforced_power_limit_w();
      if (read_back.code() == Code::gpu_lost) return read_back.status();
      if (read_back.ok()) {
        enforced[t.prior.index] = *read_back;
        if (limit_w && !clocks && std::abs(*read_back - *limit_w) > 1.0) {
          point.skipped = fmt::format(
              "GPU {}: the enforced limit is {:.0f} W, not the {:.0f} W "
              "set (another limiter holds it)",
              t.prior.index, *read_back, *limit_w);
          break;
        }
      }
    }
    if (!point.skipped) {
      // A workload's start (CUDA, the model, its own warm-up) is not the limit's warm-up.
      if (current_->points.empty()) GPUSCOPE_RETURN_IF_ERROR(wait_for_first_rate());
      GPUSCOPE_RETURN_IF_ERROR(wait(o_.cooldown_s + o_.warmup_s));
      GPUSCOPE_RETURN_IF_ERROR(measure_windows(point, enforced));
      if (clocks && limit_w && !point.skipped) check_lock(point, *limit_w);
    }
    report(point);
    current_->points.push_back(std::move(point));
    return {};
  }

 private:
  // What the dry run measures at: the current limit, or for a clock sweep the highest
  // lockable clock (an unlocked GPU's ceiling).
  double current_value() const {
    const GpuPrior& prior = targets_.front().prior;
    if (o_.knob == Knob::power_limit || prior.sm_clocks_mhz.empty()) return prior.prior_limit_w;
    return prior.sm_clocks_mhz.front();
  }

  // The lock took: under load each GPU's SM clock stayed at or below it (within a clock step
  // or 1 %); else the point is not the lock's.
  static void check_lock(Point& point, double lock_mhz) {
    const double tolerance = std::max(15.0, 0.01 * lock_mhz);
    for (const GpuReading& g : point.gpus) {
      if (!g.sm_clock_avg_hz || *g.sm_clock_avg_hz / 1e6 <= lock_mhz + tolerance) continue;
      point.skipped = fmt::format(
          "GPU {}: the SM clock averaged {:.0f} MHz under load, above the lock of {:.0f} MHz: "
          "the lock did not take",
          g.gpu, *g.sm_clock_avg_hz / 1e6, lock_mhz);
      return;
    }
  }

  Status measure_windows(Point& point, const std::map<unsigned, double>& enforced) {
    std::vector<std::pair<double, double>> spans;  // accepted windows, sampler clock
    std::vector<double> rates;
    for (int k = 0; k < o_.max_windows; ++k) {
      const double t0 = workload_->now_s();
      GPUSCOPE_RETURN_IF_ERROR(wait(o_.window_s));
      double t1 = workload_->now_s();
      auto lines = workload_->rates_between(t0, t1);
      // A workload that reports less often than --window (a gpuscope-torch window of slow
      // steps): the window lasts until its next line, for up to kLongestWindowFactor windows.
      const double longest = std::max(kLongestWindowS, kLongestWindowFactor * o_.window_s);
      while (lines.empty() && t1 - t0 < longest) {
        GPUSCOPE_RETURN_IF_ERROR(wait(0.01));
        t1 = workload_->now_s();
        lines = workload_->rates_between(t0, t1);
      }
      if (lines.empty()) continue;
      double sum = 0;
      for (double r : lines) sum += r;
      spans.emplace_back(t0, t1);
      rates.push_back(sum / static_cast<double>(lines.size()));
      if (static_cast<int>(rates.size()) >= o_.min_windows && stable(rates)) break;
    }
    if (static_cast<int>(rates.size()) < o_.min_windows) {
      point.skipped = fmt::format(
          "the workload printed no {{\"samples_per_second\": X}} line in {} of {} windows of "
          "{:g} s, each waiting up to {:g} s for one",
          o_.max_windows - static_cast<int>(rates.size()), o_.max_windows, o_.window_s,
          std::max(kLongestWindowS, kLongestWindowFactor * o_.window_s));
      return {};
    }
    // The last min_windows windows (the settled ones) count.
    const std::size_t first = rates.size() - static_cast<std::size_t>(o_.min_windows);
    point.window_samples_per_second = rates;
    point.stable = stable(rates);
    double sum = 0;
    for (std::size_t i = first; i < rates.size(); ++i) sum += rates[i];
    point.samples_per_second = sum / static_cast<double>(rates.size() - first);
    const double t0 = spans[first].first, t1 = spans.back().second;
    point.seconds = t1 - t0;
    // Let the sampler cover the end of the last window.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (recording_.last_t() < t1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    read_gpus(point, enforced, t0, t1);
    return {};
  }

  bool stable(const std::vector<double>& rates) const {
    const auto last = rates.end() - o_.min_windows;
    const auto [lo, hi] = std::minmax_element(last, rates.end());
    return *hi <= 0 || (*hi - *lo) / *hi <= o_.stable_tolerance;
  }

  void read_gpus(Point& point, const std::map<unsigned, double>& enforced, double t0, double t1) {
    double energy = 0, seconds = 0;
    bool all_energy = true;
    for (const SweptGpu& t : targets_) {
      const std::vector<telemetry::GpuSample> samples = recording_.of(t.prior.index);
      GpuReading g;
      g.gpu = t.prior.index;
      if (const auto it = enforced.find(g.gpu); it != enforced.end())
        g.enforced_limit_w = it->second;
      if (const auto e = telemetry::energy_between(samples, t0, t1); e && e->seconds > 0) {
        g.energy_j = e->joules;
        g.energy_from_counter = e->source == telemetry::EnergySource::counter;
        g.power_avg_w = e->joules / e->seconds;
        energy += e->joules;
        seconds = std::max(seconds, e->seconds);
        point.energy_from_counter = point.energy_from_counter && g.energy_from_counter;
      } else {
        all_energy = false;
      }
      auto mean = [&](Metric m) -> std::optional<double> {
        const auto c = telemetry::mean_between(samples, m, t0, t1);
        return c ? std::optional<double>(c->value) : std::nullopt;
      };
      g.power_peak_w = telemetry::peak_between(samples, Metric::power_w, t0, t1);
      g.sm_clock_avg_hz = mean(Metric::sm_clock_hz);
      g.memory_clock_avg_hz = mean(Metric::memory_clock_hz);
      g.temperature_avg_c = mean(Metric::temperature_c);
      g.temperature_max_c = telemetry::peak_between(samples, Metric::temperature_c, t0, t1);
      g.memory_temperature_avg_c = mean(Metric::memory_temperature_c);
      g.fan_avg = mean(Metric::fan_speed);
      for (const auto& [reason, time] : telemetry::throttle_between(samples, t0, t1)) {
        g.throttle_s[std::string(nvml::throttle_reason_name(reason))] = time.seconds;
      }
      if (g.temperature_avg_c) {
        point.temperature_max_c =
            std::max(point.temperature_max_c.value_or(-1e9), *g.temperature_avg_c);
      }
      point.gpus.push_back(std::move(g));
    }
    if (all_energy && seconds > 0) {
      point.energy_j = energy;
      point.power_avg_w = energy / seconds;
      if (point.samples_per_second > 0) {
        point.joules_per_sample = *point.power_avg_w / point.samples_per_second;
      }
    }
  }

  void report(const Point& p) {
    const char* unit = knob_unit(o_.knob);
    if (p.skipped) {
      progress_ << fmt::format("  {:>5.0f} {:<3}  skipped: {}\n", p.value, unit, *p.skipped);
      return;
    }
    progress_ << fmt::format(
        "  {:>5.0f} {:<3}  {:>10.2f} {}  {:>7} W avg  {:>9} J/{}  {:>5} °C{}{}\n", p.value, unit,
        p.samples_per_second, current_->spec.unit,
        p.power_avg_w ? fmt::format("{:.1f}", *p.power_avg_w) : "-",
        p.joules_per_sample ? fmt::format("{:.3f}", *p.joules_per_sample) : "-",
        current_->spec.unit == "samples/s"
            ? "sample"
            : current_->spec.unit.substr(0, current_->spec.unit.size() - 2),
        p.temperature_max_c ? fmt::format("{:.0f}", *p.temperature_max_c) : "-",
        p.stable ? "" : "  (unstable)", p.refined ? "  (knee)" : "");
    progress_.flush();
  }

  const SweepOptions& o_;
  std::vector<SweptGpu>& targets_;
  std::ostream& progress_;
  SweepResult& result_;
  Recording recording_;
  std::unique_ptr<telemetry::Sampler> sampler_;
  std::unique_ptr<detail::Workload> workload_;
  WorkloadResult* current_ = nullptr;
};

// Each workload in turn: started, measured at every limit (`limit_of(i)` for i in [0, count);
// nullopt: the current limit), then at the points around its knees (`refine`), stopped. Ends
// early only for the whole sweep's reasons (Sweeper::stop_reason).
Status sweep_workloads(Sweeper& sweeper, const SweepOptions& options, SweepResult& result,
                       std::size_t count,
                       const std::function<std::optional<double>(std::size_t)>& limit_of,
                       bool refine) {
  for (const WorkloadSpec& spec : options.workloads) {
    WorkloadResult& workload = result.workloads.emplace_back();
    workload.spec = spec;
    Status status = sweeper.start_workload(workload);
    for (std::size_t i = 0; status.ok() && i < count; ++i) {
      status = sweeper.measure(limit_of(i), false);
    }
    if (status.ok() && refine) {
      std::vector<double> fractions(std::begin(kKneeFractions), std::end(kKneeFractions));
      std::vector<double> extra;
      if (options.knob == Knob::locked_clocks && !result.gpus.empty()) {
        // Two clock steps apart at least, each a clock the GPU can lock.
        const std::vector<unsigned>& clocks = result.gpus.front().sm_clocks_mhz;
        const double step = clocks.size() > 1 ? clocks[0] - clocks[1] : 15.0;
        extra = refine_limits(workload.points, fractions, 2 * step,
                              [&clocks](double mhz) { return nearest_clock(clocks, mhz); });
      } else {
        extra = refine_limits(workload.points, fractions);
      }
      for (double limit : extra) {
        status = sweeper.measure(limit, true);
        if (!status.ok()) break;
      }
    }
    sweeper.finish_workload(status);
    GPUSCOPE_RETURN_IF_ERROR(sweeper.stop_reason());
  }
  return {};
}

// The dry run: measures at the current limit, changes nothing.
Status dry_run(const nvml::Session& session, const SweepOptions& options,
               std::vector<SweptGpu>& targets, std::ostream& progress, SweepResult& result) {
  SignalWatch signals;
  Sweeper sweeper(options, targets, progress, result);
  Status status = sweeper.start(session);
  if (status.ok()) {
    status = sweep_workloads(
        sweeper, options, result, 1, [](std::size_t) { return std::optional<double>(); }, false);
  }
  sweeper.stop();
  return status;
}

Status sweep_limits(const nvml::Session& session, const SweepOptions& options,
                    std::vector<SweptGpu>& targets, std::ostream& progress, SweepResult& result) {
  GPUSCOPE_RETURN_IF_ERROR(detail::ensure_state_dir(result.state_dir));
  // Declared first so that it outlives the locks: when its pipe closes, it must be able to take
  // them to restore what this process could not.
  std::unique_ptr<gpuscope::detail::Guardian> guardian;
  std::vector<std::unique_ptr<detail::GpuLock>> locks;
  for (const SweptGpu& t : targets) {
    auto lock = detail::GpuLock::acquire(result.state_dir, t.prior.uuid, false);
    if (!lock.ok()) return lock.status();
    locks.push_back(std::move(lock).value());
  }
  SignalWatch signals;  // before anything changes: a signal now is a stop, not a death
  if (!options.guardian_argv.empty()) {
    auto started = gpuscope::detail::Guardian::start(options.guardian_argv, "the sweep's guardian");
    if (!started.ok()) return started.status();
    guardian = std::move(started).value();
  }
  std::vector<JournalEntry> entries;
  for (const SweptGpu& t : targets) {
    JournalEntry entry;
    entry.knob = options.knob;
    entry.uuid = t.prior.uuid;
    entry.index = t.prior.index;
    entry.name = t.prior.name;
    entry.prior_limit_w = t.prior.prior_limit_w;
    entry.pid = ::getpid();
    entry.guardian_pid = guardian ? guardian->pid() : 0;
    entry.written_unix_s = unix_now_s();
    GPUSCOPE_RETURN_IF_ERROR(detail::write_journal(result.state_dir, entry));
    entries.push_back(entry);
  }
  progress << fmt::format("journal of the prior {}: {}\n",
                          options.knob == Knob::locked_clocks ? "clock settings" : "limits",
                          detail::journal_path(result.state_dir, "<UUID>", options.knob));
  detail::LimitGuard guard(session, result.state_dir, entries);

  // The driver's own answer, before the workload starts: the prior limit again changes
  // nothing; for a clock sweep, a reset (what the end restores) is the probe.
  const bool clocks = options.knob == Knob::locked_clocks;
  for (const SweptGpu& t : targets) {
    const Status probe = clocks ? t.device.reset_locked_sm_clocks()
                                : t.device.set_power_limit_w(t.prior.prior_limit_w);
    if (!probe.ok()) {
      guard.release_unchanged();
      const char* what = clocks ? "SM clock lock" : "power limit";
      if (probe.code() == Code::permission_denied) {
        return Status(Code::permission_denied,
                      fmt::format("the driver refused to set GPU {}'s {} ({}); {}", t.prior.index,
                                  what, probe.message(), privilege_hint(options.knob)));
      }
      return probe.with_context(
          fmt::format("GPU {}: the {} cannot be set; nothing was changed", t.prior.index, what));
    }
  }

  Sweeper sweeper(options, targets, progress, result);
  Status status = sweeper.start(session);
  if (status.ok()) {
    const std::vector<double>& plan = result.plan;
    status = sweep_workloads(
        sweeper, options, result, plan.size(),
        [&plan](std::size_t i) { return std::optional<double>(plan[i]); }, options.refine);
  }
  sweeper.stop();
  result.restored_all = guard.restore(result.restore_notes);
  for (const std::string& note : result.restore_notes) progress << note << '\n';
  return status;
}

}  // namespace

bool SweepResult::workload_failed() const {
  return std::any_of(workloads.begin(), workloads.end(),
                     [](const WorkloadResult& w) { return !w.ended.ok(); });
}

const char* knob_name(Knob knob) {
  return knob == Knob::locked_clocks ? "locked_clocks" : "power_limit";
}

const char* knob_unit(Knob knob) {
  return knob == Knob::locked_clocks ? "MHz" : "W";
}

const char* knob_key(Knob knob) {
  return knob == Knob::locked_clocks ? "sm_clock_lock_mhz" : "power_limit_w";
}

std::string command_label(const std::vector<std::string>& command) {
  std::string label;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const std::string arg =
        i == 0 ? std::filesystem::path(command[i]).filename().string() : command[i];
    label += (label.empty() ? "" : " ") + arg;
  }
  return label;
}

Result<SweepResult> run_sweep(const SweepOptions& options, std::ostream& progress) {
  GPUSCOPE_RETURN_IF_ERROR(check_options(options));
  SweepResult result;
  result.knob = options.knob;
  result.dry_run = options.dry_run;
  result.privileged = has_power_change_privilege();
  result.state_dir = options.state_dir.empty() ? default_state_dir() : options.state_dir;
  result.started_unix_s = unix_now_s();
  if (!options.dry_run && !result.privileged) {
    return Status(Code::permission_denied, privilege_hint(options.knob));
  }
  auto session = nvml::Session::open();
  if (!session.ok()) return session.status();
  auto targets = resolve_gpus(**session, options.gpus, options.knob);
  if (!targets.ok()) return targets.status();
  double low = 0, high = 1e12;
  for (const SweptGpu& t : *targets) {
    low = std::max(low, t.prior.min_limit_w);
    high = std::min(high, t.prior.max_limit_w);
    result.gpus.push_back(t.prior);
  }
  const bool clocks = options.knob == Knob::locked_clocks;
  auto plan = clocks ? plan_clocks(targets->empty() ? std::vector<unsigned>{}
                                                    : targets->front().prior.sm_clocks_mhz,
                                   options.limits)
                     : plan_limits(low, high, options.limits);
  if (!plan.ok()) return plan.status();
  result.plan = *plan;

  progress << fmt::format("sweep of {} GPU(s){}\n", targets->size(),
                          options.dry_run ? " (dry run: nothing is changed)" : "");
  for (const GpuPrior& g : result.gpus) {
    if (clocks) {
      progress << fmt::format(
          "  GPU {} {} ({}): SM clock lockable {}-{} MHz ({} clocks); power limit {} (not "
          "changed)\n",
          g.index, g.name, g.uuid, g.sm_clocks_mhz.back(), g.sm_clocks_mhz.front(),
          g.sm_clocks_mhz.size(),
          g.prior_limit_w > 0 ? fmt::format("{:.0f} W", g.prior_limit_w) : "unknown");
      continue;
    }
    progress << fmt::format(
        "  GPU {} {} ({}): power limit {:.0f} W now, settable {:.0f}-{:.0f} "
        "W{}\n",
        g.index, g.name, g.uuid, g.prior_limit_w, g.min_limit_w, g.max_limit_w,
        g.default_limit_w ? fmt::format(", default {:.0f} W", *g.default_limit_w) : "");
  }
  std::string plan_text;
  for (double w : result.plan)
    plan_text += fmt::format("{}{:.0f}", plan_text.empty() ? "" : " ", w);
  progress << fmt::format("  plan ({}): {}{}\n", knob_unit(options.knob), plan_text,
                          options.refine ? ", then points around the 80/90/95 % knees" : "");
  if (clocks) {
    progress << (options.dry_run
                     ? "  the dry run measures the clocks as they are (its point is shown at the "
                       "highest lockable clock)\n"
                     : "  each point locks the SM clock (min = max); the end resets the lock: "
                       "NVML cannot read a lock set before the sweep, so none is set again\n");
    if (targets->size() > 1) {
      progress << "  the plan's clocks are GPU " << result.gpus.front().index
               << "'s; another GPU's driver rounds them to its own\n";
    }
  }
  progress << fmt::format("  privilege to change {} (root or CAP_SYS_ADMIN): {}\n",
                          clocks ? "clocks" : "limits", result.privileged ? "yes" : "no");
  progress << fmt::format("  journal folder: {}\n", result.state_dir);

  const auto started = std::chrono::steady_clock::now();
  result.stopped = options.dry_run ? dry_run(**session, options, *targets, progress, result)
                                   : sweep_limits(**session, options, *targets, progress, result);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Refusals before anything ran are failures of the command, not an early end.
  const bool measured = std::any_of(result.workloads.begin(), result.workloads.end(),
                                    [](const WorkloadResult& w) { return !w.points.empty(); });
  if (!result.stopped.ok() && !measured && result.stopped.code() != Code::cancelled &&
      result.stopped.code() != Code::gpu_lost) {
    return result.stopped;
  }
  // A single workload that could not start is the command's failure too (as a sweep's was).
  if (result.stopped.ok() && !measured && result.workloads.size() == 1 &&
      !result.workloads.front().ended.ok() && options.workloads.size() == 1) {
    return result.workloads.front().ended;
  }
  // A clock sweep's prior is "unlocked": its fastest point is the comparison.
  const std::optional<double> prior =
      result.gpus.empty() || clocks ? std::nullopt
                                    : std::optional<double>(result.gpus.front().prior_limit_w);
  for (WorkloadResult& workload : result.workloads) {
    compute_answers(workload, prior, clocks ? 15 : 5, knob_unit(options.knob));
  }
  return result;
}

}  // namespace gpuscope::sweep
