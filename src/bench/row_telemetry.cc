#include "bench/row_telemetry.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

namespace gpuscope::bench::detail {

using telemetry::Metric;

void SampleLog::add(const telemetry::GpuSample& sample) {
  std::lock_guard lock(mutex_);
  samples_.push_back(sample);
}

std::vector<telemetry::GpuSample> SampleLog::snapshot() const {
  std::lock_guard lock(mutex_);
  return samples_;
}

std::optional<double> SampleLog::last_t() const {
  std::lock_guard lock(mutex_);
  if (samples_.empty()) return std::nullopt;
  return samples_.back().t_s;
}

void SampleLog::drop_before(double t) {
  std::lock_guard lock(mutex_);
  auto first_kept = std::find_if(samples_.begin(), samples_.end(),
                                 [t](const telemetry::GpuSample& s) { return s.t_s >= t; });
  if (first_kept != samples_.begin()) --first_kept;
  samples_.erase(samples_.begin(), first_kept);
}

namespace {

// One GPU's samples: fill_row_telemetry for a row on that GPU alone.
void fill_one_gpu(const std::vector<telemetry::GpuSample>& samples,
                  const std::vector<TimedWindow>& windows, double row_t0, double row_t1, Row& row,
                  bool whole_gpu) {
  if (whole_gpu) {
    row.gpu_memory_peak_bytes =
        telemetry::peak_between(samples, Metric::memory_used_bytes, row_t0, row_t1);
  }
  if (windows.empty()) return;
  double timed = 0, samples_done = 0, energy = 0, covered = 0;
  bool have_energy = true;
  for (const TimedWindow& w : windows) {
    timed += w.t1 - w.t0;
    samples_done += w.samples;
    if (w.t1 - w.t0 < kMinEnergyWindowS) row.short_windows = true;
    auto e = telemetry::energy_between(samples, w.t0, w.t1);
    if (!e) {
      have_energy = false;
      continue;
    }
    energy += e->joules;
    covered += e->seconds;
  }
  row.timed_seconds = timed;
  row.timed_samples = samples_done;
  // Energy counts only when the samples cover (nearly) all the timed time.
  if (whole_gpu && have_energy && covered > 0 && covered >= 0.9 * timed) {
    row.energy_j = energy * timed / covered;
    row.power_avg_w = energy / covered;
    if (samples_done > 0) row.energy_per_sample_j = *row.energy_j / samples_done;
  }
  const double t0 = windows.front().t0, t1 = windows.back().t1;
  if (auto m = telemetry::mean_between(samples, Metric::sm_activity, t0, t1)) {
    row.sm_activity = m->value;
  }
  if (auto m = telemetry::mean_between(samples, Metric::tensor_activity, t0, t1)) {
    row.tensor_activity = m->value;
  }
  auto throttle = telemetry::throttle_between(samples, t0, t1);
  if (!throttle.empty()) {
    double s = 0;
    for (const auto& [reason, time] : throttle) s = std::max(s, time.seconds);
    row.throttle_s = s;  // reasons overlap: the longest one, not their sum
  }
}

std::vector<telemetry::GpuSample> of_gpu(const std::vector<telemetry::GpuSample>& samples,
                                         unsigned gpu) {
  std::vector<telemetry::GpuSample> mine;
  for (const telemetry::GpuSample& s : samples) {
    if (s.gpu == gpu) mine.push_back(s);
  }
  return mine;
}

std::optional<double> most(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

}  // namespace

void fill_row_telemetry(const std::vector<telemetry::GpuSample>& samples,
                        const std::vector<TimedWindow>& windows, double row_t0, double row_t1,
                        Row& row, bool whole_gpu, const std::vector<unsigned>& gpus) {
  if (gpus.empty()) return fill_one_gpu(samples, windows, row_t0, row_t1, row, whole_gpu);
  if (gpus.size() == 1) {
    return fill_one_gpu(of_gpu(samples, gpus.front()), windows, row_t0, row_t1, row, whole_gpu);
  }
  // Each GPU as a row of its own, then the job's: sums, means and maxima.
  std::vector<Row> each(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    fill_one_gpu(of_gpu(samples, gpus[i]), windows, row_t0, row_t1, each[i], whole_gpu);
  }
  const auto n = static_cast<double>(gpus.size());
  const Row& first = each.front();
  row.timed_seconds = first.timed_seconds;
  row.short_windows = first.short_windows;
  if (first.timed_samples) row.timed_samples = *first.timed_samples * n;  // every rank's
  const bool all_energy =
      std::all_of(each.begin(), each.end(), [](const Row& r) { return r.energy_j.has_value(); });
  if (all_energy) {
    double energy = 0, power = 0;
    for (const Row& r : each) energy += *r.energy_j, power += *r.power_avg_w;
    row.energy_j = energy;
    row.power_avg_w = power;
    if (row.timed_samples && *row.timed_samples > 0)
      row.energy_per_sample_j = energy / *row.timed_samples;
  }
  const auto mean_of = [&](std::optional<double> Row::*field) -> std::optional<double> {
    double sum = 0;
    for (const Row& r : each) {
      if (!(r.*field)) return std::nullopt;
      sum += *(r.*field);
    }
    return sum / n;
  };
  row.sm_activity = mean_of(&Row::sm_activity);
  row.tensor_activity = mean_of(&Row::tensor_activity);
  for (const Row& r : each) {
    row.throttle_s = most(row.throttle_s, r.throttle_s);
    row.gpu_memory_peak_bytes = most(row.gpu_memory_peak_bytes, r.gpu_memory_peak_bytes);
  }
}

telemetry::SamplerOptions row_sampler_options(const std::vector<std::string>& gpus,
                                              int interval_ms) {
  telemetry::SamplerOptions o;
  o.interval = std::chrono::milliseconds(interval_ms);
  o.gpus = gpus;
  o.processes = false;
  o.slow_reading_threshold_s = std::numeric_limits<double>::infinity();
  return o;
}

Result<std::unique_ptr<RowSampler>> RowSampler::start(const nvml::Session& session, unsigned gpu,
                                                      const std::optional<Target>& mig,
                                                      int interval_ms, unsigned also_gpus) {
  std::vector<std::string> selectors = {mig ? mig->uuid() : std::to_string(gpu)};
  if (!mig && also_gpus > 0) {
    // A GPU the machine does not have is left out: rows on it then have no energy.
    const unsigned count = session.device_count().value_or(0);
    for (unsigned g = 0; g < std::min(also_gpus, count); ++g) {
      if (g != gpu) selectors.push_back(std::to_string(g));
    }
  }
  GPUSCOPE_ASSIGN_OR_RETURN(
      auto sampler, telemetry::Sampler::open(session, row_sampler_options(selectors, interval_ms)));
  std::unique_ptr<RowSampler> rs(new RowSampler());
  if (mig && mig->mig) rs->mig_gpu_instance_ = mig->mig->gpu_instance_id;
  rs->sampler_ = std::move(sampler);
  rs->interval_s_ = interval_ms / 1000.0;
  SampleLog* log = &rs->log_;
  rs->sampler_->start([log](telemetry::Tick&& tick) {
    for (const telemetry::GpuSample& s : tick.gpus) log->add(s);
  });
  return rs;
}

std::vector<telemetry::GpuSample> RowSampler::samples() const {
  std::vector<telemetry::GpuSample> all = log_.snapshot();
  if (!mig_gpu_instance_) return all;
  return telemetry::instance_view(all, *mig_gpu_instance_);
}

RowSampler::~RowSampler() {
  if (sampler_) sampler_->stop();
}

double RowSampler::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - sampler_->origin())
      .count();
}

void RowSampler::wait_past(double t) const {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(2 * interval_s_ + 0.05);
  while (std::chrono::steady_clock::now() < deadline) {
    auto last = log_.last_t();
    if (last && *last >= t) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool RowSampler::samples_gpu(unsigned index) const {
  const auto& gpus = sampler_->gpus();
  return std::any_of(gpus.begin(), gpus.end(), [index](const telemetry::SampledGpu& g) {
    return g.target.gpu_index == index;
  });
}

const telemetry::SampledGpu& RowSampler::gpu() const {
  return sampler_->gpus().front();
}

}  // namespace gpuscope::bench::detail
