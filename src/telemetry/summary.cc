// The monitoring session's summary, folded tick by tick.
#include <algorithm>
#include <set>

#include "gpuscope/telemetry.h"
#include "telemetry/series_accumulator.h"

namespace gpuscope::telemetry {

struct SummaryBuilder::State {
  struct Gpu {
    SampledGpu identity;
    detail::SeriesAccumulator series;
    std::optional<double> lost_at_s;
    std::vector<std::string> problems;
    std::set<unsigned> command_pids;
    std::optional<double> command_memory_peak;
    bool process_list_read = false;
  };
  std::vector<Gpu> gpus;
  double started_unix_s = 0;
  double interval_s = 0;
  std::function<bool(unsigned)> is_command_pid;
  std::map<unsigned, bool> pid_verdicts;  // asked once per PID, while it runs
  SamplerCost cost;
  double cpu_total = 0, wall_total = 0;

  Gpu* find(unsigned index) {
    for (Gpu& g : gpus) {
      if (g.identity.target.gpu_index == index) return &g;
    }
    return nullptr;
  }
  bool command_pid(unsigned pid) {
    auto [it, inserted] = pid_verdicts.emplace(pid, false);
    if (inserted) it->second = is_command_pid(pid);
    return it->second;
  }
  void add_processes(Gpu& gpu, const std::vector<ProcessSample>& processes) {
    gpu.process_list_read = true;
    if (!is_command_pid) return;
    double memory = 0;
    bool any = false;
    for (const ProcessSample& p : processes) {
      if (!command_pid(p.pid)) continue;
      any = true;
      gpu.command_pids.insert(p.pid);
      memory += static_cast<double>(p.used_memory_bytes.value_or(0));
    }
    if (any) {
      gpu.command_memory_peak =
          gpu.command_memory_peak ? std::max(*gpu.command_memory_peak, memory) : memory;
    }
  }
};

SummaryBuilder::SummaryBuilder(std::vector<SampledGpu> gpus, double started_unix_s,
                               double interval_s, std::function<bool(unsigned pid)> is_command_pid)
    : state_(std::make_unique<State>()) {
  for (SampledGpu& id : gpus) {
    State::Gpu gpu;
    gpu.identity = std::move(id);
    state_->gpus.push_back(std::move(gpu));
  }
  state_->started_unix_s = started_unix_s;
  state_->interval_s = interval_s;
  state_->is_command_pid = std::move(is_command_pid);
}

SummaryBuilder::~SummaryBuilder() = default;
SummaryBuilder::SummaryBuilder(SummaryBuilder&&) noexcept = default;
SummaryBuilder& SummaryBuilder::operator=(SummaryBuilder&&) noexcept = default;

void SummaryBuilder::add(const Tick& tick) {
  State& s = *state_;
  ++s.cost.ticks;
  s.cost.missed += tick.missed_before;
  s.cpu_total += tick.cpu_s;
  s.wall_total += tick.wall_s;
  s.cost.cpu_max_s = std::max(s.cost.cpu_max_s, tick.cpu_s);
  for (const GpuSample& sample : tick.gpus) {
    State::Gpu* gpu = s.find(sample.gpu);
    if (gpu == nullptr) continue;
    for (const std::string& p : sample.problems) gpu->problems.push_back(p);
    if (sample.lost) {
      if (!gpu->lost_at_s) gpu->lost_at_s = sample.t_s;
      continue;
    }
    gpu->series.add(sample);
    if (sample.processes) s.add_processes(*gpu, *sample.processes);
  }
}

Summary SummaryBuilder::summary(double wall_s) const {
  const State& s = *state_;
  Summary out;
  out.started_unix_s = s.started_unix_s;
  out.wall_s = wall_s;
  out.interval_s = s.interval_s;
  out.sampler = s.cost;
  if (s.cost.ticks > 0) {
    out.sampler.cpu_per_tick_s = s.cpu_total / static_cast<double>(s.cost.ticks);
    out.sampler.wall_per_tick_s = s.wall_total / static_cast<double>(s.cost.ticks);
  }
  bool any_list = false;
  std::vector<unsigned> command_gpus;
  for (const State::Gpu& g : s.gpus) {
    GpuSummary gs;
    gs.gpu = g.identity;
    const detail::SeriesAccumulator& acc = g.series;
    gs.samples = acc.samples_in_window();
    if (acc.first_t() && acc.last_t()) gs.seconds = *acc.last_t() - *acc.first_t();
    gs.energy = acc.energy();
    if (gs.energy && gs.energy->seconds > 0)
      gs.power_avg_w = gs.energy->joules / gs.energy->seconds;
    gs.power_peak_w = acc.peak(Metric::power_w);
    gs.memory_peak_bytes = acc.peak(Metric::memory_used_bytes);
    auto mean = [&acc](Metric m) -> std::optional<double> {
      auto c = acc.mean(m);
      if (!c) return std::nullopt;
      return c->value;
    };
    gs.sm_activity_avg = mean(Metric::sm_activity);
    gs.tensor_activity_avg = mean(Metric::tensor_activity);
    gs.dram_activity_avg = mean(Metric::dram_activity);
    gs.gpu_utilization_avg = mean(Metric::gpu_utilization);
    gs.sm_clock_avg_hz = mean(Metric::sm_clock_hz);
    gs.temperature_max_c = acc.peak(Metric::temperature_c);
    gs.throttle = acc.throttle();
    gs.lost_at_s = g.lost_at_s;
    gs.problems = g.problems;
    gs.command_pids.assign(g.command_pids.begin(), g.command_pids.end());
    gs.command_memory_peak_bytes = g.command_memory_peak;
    any_list = any_list || g.process_list_read;
    if (!g.command_pids.empty()) command_gpus.push_back(g.identity.target.gpu_index);
    if (gs.energy) out.energy_j = out.energy_j.value_or(0) + gs.energy->joules;
    out.gpus.push_back(std::move(gs));
  }
  if (s.is_command_pid && any_list) out.command_gpus = command_gpus;
  return out;
}

}  // namespace gpuscope::telemetry
