#include "telemetry/gpu_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <utility>

namespace gpuscope::telemetry::detail {
namespace {

// Readings that are read once a second anyway (sampler.cc's slow rounds).
const std::set<std::string_view> kOnceASecond = {"power_limit", "fan",       "ecc",
                                                 "pcie",        "processes", "process_utilization"};
constexpr std::uint64_t kCostCalls = 5;

}  // namespace

GpuReader::GpuReader(SampledGpu identity) : identity_(std::move(identity)) {}

GpuReader::GpuReader(nvml::Device device, SampledGpu identity,
                     std::unique_ptr<nvml::GpmSampler> gpm,
                     std::map<unsigned, std::unique_ptr<nvml::GpmSampler>> instance_gpm,
                     bool processes, double slow_reading_s)
    : device_(device),
      identity_(std::move(identity)),
      gpm_(std::move(gpm)),
      instance_gpm_(std::move(instance_gpm)),
      processes_(processes),
      slow_reading_s_(slow_reading_s) {}

std::unique_ptr<GpuReader> GpuReader::lost_from_start(SampledGpu identity) {
  std::unique_ptr<GpuReader> reader(new GpuReader(std::move(identity)));
  reader->lost_ = true;
  return reader;
}

template <typename Call>
auto GpuReader::take(const char* reading, GpuSample& sample, Call&& call)
    -> std::optional<std::decay_t<decltype(call().value())>> {
  const auto start = std::chrono::steady_clock::now();
  auto result = call();
  Cost& cost = costs_[reading];
  ++cost.calls;
  cost.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A reading the driver makes expensive moves to the once-a-second rounds (not GPM: its pairs
  // are what it measures). Judged on a few calls, so a first slow call does not decide it.
  if (!kOnceASecond.contains(reading) && std::string_view(reading) != "gpm" &&
      cost.calls >= kCostCalls &&
      cost.seconds / static_cast<double>(cost.calls) > slow_reading_s_) {
    slowed_.insert(reading);
  }
  if (result.ok()) return std::move(result).value();
  switch (result.code()) {
    case Code::not_supported:
      unsupported_.insert(reading);
      break;
    case Code::gpu_lost:
      lost_ = true;
      if (reported_.insert("gpu_lost").second) {
        sample.problems.push_back(fmt::format("{}: {}", reading, result.status().message()));
      }
      break;
    default:
      if (reported_.insert(reading).second) {
        sample.problems.push_back(fmt::format("{}: {}", reading, result.status().message()));
      }
      break;
  }
  return std::nullopt;
}

bool GpuReader::due(const char* reading) const {
  if (lost_ || unsupported_.contains(reading)) return false;
  return slow_round_ || !slowed_.contains(reading);
}

std::vector<ReadingCost> GpuReader::costs() const {
  std::vector<ReadingCost> out;
  for (const auto& [name, cost] : costs_) {
    out.push_back({name, cost.calls,
                   cost.calls > 0 ? cost.seconds / static_cast<double>(cost.calls) : 0,
                   slowed_.contains(name)});
  }
  return out;
}

GpuSample GpuReader::read(double t_s, double unix_s, std::chrono::steady_clock::time_point gpm_time,
                          bool slow) {
  GpuSample sample;
  sample.gpu = identity_.target.gpu_index;
  sample.t_s = t_s;
  sample.unix_s = unix_s;
  slow_round_ = slow;
  if (!lost_) {
    read_fast(sample);
    if (!lost_) read_fields(sample);
    if (!lost_) read_gpm(sample, gpm_time);
    if (!lost_ && slow) read_slow(sample);
  }
  // Some drivers answer NaN for a GPM metric now and then: that is no reading, not a value.
  for (const MetricInfo& info : metric_catalogue()) {
    if (auto v = sample.values.get(info.metric); v && !std::isfinite(*v)) {
      sample.values.set(info.metric, std::nullopt);
    }
  }
  if (lost_) {
    // Only the first lost sample goes out: after it, the sampler drops this GPU.
    sample.values = MetricValues{};
    sample.processes.reset();
    sample.lost = !lost_reported_;
    lost_reported_ = true;
  }
  return sample;
}

void GpuReader::read_fast(GpuSample& sample) {
  MetricValues& v = sample.values;
  if (due("memory")) {
    if (auto m = take("memory", sample, [&] { return device_->memory(); })) {
      v.set(Metric::memory_used_bytes, static_cast<double>(m->used_bytes));
      v.set(Metric::memory_free_bytes, static_cast<double>(m->free_bytes));
      v.set(Metric::memory_total_bytes, static_cast<double>(m->total_bytes));
    }
  }
  if (due("utilization")) {
    if (auto u = take("utilization", sample, [&] { return device_->utilization(); })) {
      v.set(Metric::gpu_utilization, u->gpu);
      v.set(Metric::memory_utilization, u->memory);
    }
  }
  if (due("power"))
    v.set(Metric::power_w, take("power", sample, [&] { return device_->power_w(); }));
  if (due("energy")) {
    v.set(Metric::energy_j, take("energy", sample, [&] { return device_->total_energy_j(); }));
  }
  if (due("temperature")) {
    v.set(Metric::temperature_c,
          take("temperature", sample, [&] { return device_->temperature_c(); }));
  }
  if (due("sm_clock")) {
    if (auto mhz =
            take("sm_clock", sample, [&] { return device_->clock_mhz(nvml::ClockDomain::sm); })) {
      v.set(Metric::sm_clock_hz, *mhz * 1e6);
    }
  }
  if (due("memory_clock")) {
    if (auto mhz = take("memory_clock", sample,
                        [&] { return device_->clock_mhz(nvml::ClockDomain::memory); })) {
      v.set(Metric::memory_clock_hz, *mhz * 1e6);
    }
  }
  if (due("clock_event_reasons")) {
    if (auto mask =
            take("clock_event_reasons", sample, [&] { return device_->clock_event_reasons(); })) {
      v.set(Metric::clock_event_reasons, static_cast<double>(*mask));
    }
  }
  if (due("throttle_time")) {
    if (auto counters =
            take("throttle_time", sample, [&] { return device_->throttle_time_ns(); })) {
      for (const auto& [reason, ns] : *counters) {
        if (auto metric = throttle_metric(reason)) v.set(*metric, static_cast<double>(ns) * 1e-9);
      }
    }
  }
}

void GpuReader::read_fields(GpuSample& sample) {
  if (!due("fields")) return;
  auto fields = take("fields", sample, [&] { return device_->monitor_fields(); });
  if (!fields) return;
  MetricValues& v = sample.values;
  v.set(Metric::power_instant_w, fields->power_instant_w);
  v.set(Metric::power_average_w, fields->power_average_w);
  v.set(Metric::memory_temperature_c, fields->memory_temperature_c);
  if (fields->nvlink_tx_bytes && fields->nvlink_rx_bytes) {
    const double tx = static_cast<double>(*fields->nvlink_tx_bytes);
    const double rx = static_cast<double>(*fields->nvlink_rx_bytes);
    v.set(Metric::nvlink_tx_bytes, tx);
    v.set(Metric::nvlink_rx_bytes, rx);
    if (nvlink_t_s_ && sample.t_s > *nvlink_t_s_ && tx >= *nvlink_tx_ && rx >= *nvlink_rx_) {
      const double dt = sample.t_s - *nvlink_t_s_;
      v.set(Metric::nvlink_tx_bytes_per_s, (tx - *nvlink_tx_) / dt);
      v.set(Metric::nvlink_rx_bytes_per_s, (rx - *nvlink_rx_) / dt);
    }
    nvlink_t_s_ = sample.t_s;
    nvlink_tx_ = tx;
    nvlink_rx_ = rx;
  }
}

void GpuReader::read_gpm(GpuSample& sample, std::chrono::steady_clock::time_point gpm_time) {
  for (auto& [instance, sampler] : instance_gpm_) {
    if (lost_) return;
    // The pointer by value: clang 14 (the fuzz preset's) cannot capture a structured binding.
    auto metrics = take("gpm", sample, [&, gpm = sampler.get()] { return gpm->sample(gpm_time); });
    if (!metrics || !*metrics) continue;
    const nvml::GpmMetrics& m = **metrics;
    InstanceSample& out = sample.instances.emplace_back();
    out.gpu_instance_id = instance;
    out.gpm_interval_s = m.interval_seconds;
    out.values.set(Metric::sm_activity, m.sm_activity);
    out.values.set(Metric::sm_occupancy, m.sm_occupancy);
    out.values.set(Metric::tensor_activity, m.tensor_activity);
    out.values.set(Metric::dram_activity, m.dram_activity);
    out.values.set(Metric::graphics_activity, m.graphics_activity);
    out.values.set(Metric::fp64_activity, m.fp64_activity);
    out.values.set(Metric::fp32_activity, m.fp32_activity);
    out.values.set(Metric::fp16_activity, m.fp16_activity);
  }
  if (gpm_ == nullptr || !due("gpm")) return;
  auto metrics = take("gpm", sample, [&] { return gpm_->sample(gpm_time); });
  if (!metrics || !*metrics) return;
  const nvml::GpmMetrics& m = **metrics;
  MetricValues& v = sample.values;
  sample.gpm_interval_s = m.interval_seconds;
  v.set(Metric::sm_activity, m.sm_activity);
  v.set(Metric::sm_occupancy, m.sm_occupancy);
  v.set(Metric::tensor_activity, m.tensor_activity);
  v.set(Metric::dram_activity, m.dram_activity);
  v.set(Metric::graphics_activity, m.graphics_activity);
  v.set(Metric::fp64_activity, m.fp64_activity);
  v.set(Metric::fp32_activity, m.fp32_activity);
  v.set(Metric::fp16_activity, m.fp16_activity);
  if (m.pcie_tx_bytes_per_s && m.pcie_rx_bytes_per_s) {
    // The mean over the GPM interval, and free: no need for the blocking PCIe call.
    pcie_from_gpm_ = true;
    v.set(Metric::pcie_tx_bytes_per_s, m.pcie_tx_bytes_per_s);
    v.set(Metric::pcie_rx_bytes_per_s, m.pcie_rx_bytes_per_s);
  }
}

void GpuReader::read_slow(GpuSample& sample) {
  MetricValues& v = sample.values;
  if (due("power_limit")) {
    v.set(Metric::power_limit_w,
          take("power_limit", sample, [&] { return device_->enforced_power_limit_w(); }));
  }
  if (due("fan"))
    v.set(Metric::fan_speed, take("fan", sample, [&] { return device_->fan_speed_fraction(); }));
  if (due("ecc")) {
    auto corrected =
        take("ecc", sample, [&] { return device_->ecc_errors(nvml::EccErrorType::corrected); });
    if (corrected) v.set(Metric::ecc_corrected_errors, static_cast<double>(*corrected));
    if (corrected && !lost_) {
      auto uncorrected =
          take("ecc", sample, [&] { return device_->ecc_errors(nvml::EccErrorType::uncorrected); });
      if (uncorrected) v.set(Metric::ecc_uncorrected_errors, static_cast<double>(*uncorrected));
    }
  }
  if (!lost_ && !pcie_from_gpm_ && due("pcie")) {
    if (auto pcie = take("pcie", sample, [&] { return device_->pcie_throughput_bytes_per_s(); })) {
      v.set(Metric::pcie_tx_bytes_per_s, pcie->first);
      v.set(Metric::pcie_rx_bytes_per_s, pcie->second);
    }
  }
  if (!lost_ && processes_) read_processes(sample);
}

void GpuReader::read_processes(GpuSample& sample) {
  if (!due("processes")) return;
  auto list = take("processes", sample, [&] { return device_->compute_processes(); });
  if (!list) return;
  // The driver answers only with samples newer than the last one we saw: keep each process's
  // latest until a newer one comes.
  std::map<unsigned, nvml::ProcessUtilization>& latest = process_utilization_;
  if (due("process_utilization")) {
    if (auto utilization = take("process_utilization", sample,
                                [&] { return device_->process_utilization(process_stamp_us_); })) {
      for (const nvml::ProcessUtilization& u : *utilization) {
        process_stamp_us_ = std::max(process_stamp_us_, u.timestamp_us);
        auto [it, inserted] = latest.emplace(u.pid, u);
        if (!inserted && u.timestamp_us >= it->second.timestamp_us) it->second = u;
      }
    }
  }
  std::map<unsigned, std::string> names;
  std::vector<ProcessSample> processes;
  for (const nvml::GpuProcess& p : *list) {
    ProcessSample out;
    out.pid = p.pid;
    auto known = process_names_.find(p.pid);
    out.name = known != process_names_.end() ? known->second : process_name(p.pid);
    names[p.pid] = out.name;
    if (p.used_memory_bytes) out.used_memory_bytes = *p.used_memory_bytes;
    if (auto u = latest.find(p.pid); u != latest.end()) {
      out.sm_utilization = u->second.sm;
      out.memory_utilization = u->second.memory;
    }
    processes.push_back(std::move(out));
  }
  process_names_ = std::move(names);  // forget exited PIDs: their numbers get reused
  std::erase_if(latest,
                [this](const auto& entry) { return !process_names_.contains(entry.first); });
  sample.processes = std::move(processes);
}

std::string process_name(unsigned pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string name;
  if (!in || !std::getline(in, name)) return "";
  return name;
}

}  // namespace gpuscope::telemetry::detail
