#include "telemetry/sample_json.h"
#include "gpuscope/json.h"

#include <fmt/format.h>

#include <cmath>

namespace gpuscope::telemetry::detail {
namespace {

using nlohmann::json;

double joules_to_wh(double j) {
  return j / 3600.0;
}

}  // namespace

json identity_to_json(const SampledGpu& gpu) {
  const Target& t = gpu.target;
  json j = {{"index", t.gpu_index},
            {"name", t.name},
            {"uuid", t.gpu_uuid},
            {"pci_bus_id", t.pci_bus_id.value_or("")},
            {"gpm", gpu.gpm}};
  if (t.memory_total_bytes) j["memory_total_bytes"] = *t.memory_total_bytes;
  put(j, "power_limit_w", gpu.power_limit_w);
  return j;
}

SampledGpu identity_from_json(gpuscope::detail::JsonFields& f) {
  SampledGpu gpu;
  Target& t = gpu.target;
  t.gpu_index = f.opt_unsigned<unsigned>("index").value_or(0);
  t.name = t.gpu_name = f.opt_text("name").value_or("");
  t.gpu_uuid = f.opt_text("uuid").value_or("");
  if (auto pci = f.opt_text("pci_bus_id"); pci && !pci->empty()) t.pci_bus_id = *pci;
  t.memory_total_bytes = f.opt_unsigned<std::uint64_t>("memory_total_bytes");
  gpu.gpm = f.opt_bool("gpm").value_or(false);
  gpu.power_limit_w = f.opt_number("power_limit_w");
  return gpu;
}

json sample_to_json(const GpuSample& sample) {
  json j = {
      {"type", "sample"}, {"t_s", sample.t_s}, {"unix_s", sample.unix_s}, {"gpu", sample.gpu}};
  put(j, "gpm_interval_s", sample.gpm_interval_s);
  for (const MetricInfo& info : metric_catalogue()) {
    if (auto v = sample.values.get(info.metric); v && std::isfinite(*v)) {
      j[std::string(info.name)] = *v;
    }
  }
  if (sample.processes) {
    json list = json::array();
    for (const ProcessSample& p : *sample.processes) {
      json pj = {{"pid", p.pid}, {"name", p.name}};
      if (p.used_memory_bytes) pj["used_memory_bytes"] = *p.used_memory_bytes;
      put(pj, "sm_utilization", p.sm_utilization);
      put(pj, "memory_utilization", p.memory_utilization);
      list.push_back(std::move(pj));
    }
    j["processes"] = std::move(list);
  }
  if (!sample.problems.empty()) j["problems"] = sample.problems;
  return j;
}

Result<GpuSample> sample_from_json(const json& j) {
  try {
    GpuSample s;
    s.t_s = j.at("t_s").get<double>();
    s.unix_s = j.value("unix_s", 0.0);
    s.gpu = j.at("gpu").get<unsigned>();
    if (j.contains("gpm_interval_s")) s.gpm_interval_s = j["gpm_interval_s"].get<double>();
    for (const MetricInfo& info : metric_catalogue()) {
      auto it = j.find(std::string(info.name));
      if (it != j.end()) s.values.set(info.metric, it->get<double>());
    }
    if (auto it = j.find("processes"); it != j.end()) {
      std::vector<ProcessSample> list;
      for (const json& pj : *it) {
        ProcessSample p;
        p.pid = pj.at("pid").get<unsigned>();
        p.name = pj.value("name", "");
        if (pj.contains("used_memory_bytes"))
          p.used_memory_bytes = pj["used_memory_bytes"].get<std::uint64_t>();
        if (pj.contains("sm_utilization")) p.sm_utilization = pj["sm_utilization"].get<double>();
        if (pj.contains("memory_utilization"))
          p.memory_utilization = pj["memory_utilization"].get<double>();
        list.push_back(std::move(p));
      }
      s.processes = std::move(list);
    }
    if (auto it = j.find("problems"); it != j.end())
      s.problems = it->get<std::vector<std::string>>();
    return s;
  } catch (const json::exception& e) {
    return Status(Code::data_error, fmt::format("not a gpuscope monitor sample: {}", e.what()));
  }
}

json summary_core_to_json(const Summary& summary) {
  json gpus = json::array();
  for (const GpuSummary& g : summary.gpus) {
    json j = identity_to_json(g.gpu);
    j["samples"] = g.samples;
    j["seconds"] = g.seconds;
    if (g.energy) {
      j["energy_j"] = g.energy->joules;
      j["energy_wh"] = joules_to_wh(g.energy->joules);
      j["energy_seconds"] = g.energy->seconds;
      j["energy_source"] = g.energy->source == EnergySource::counter ? "counter" : "power_integral";
    }
    put(j, "power_avg_w", g.power_avg_w);
    put(j, "power_peak_w", g.power_peak_w);
    put(j, "memory_peak_bytes", g.memory_peak_bytes);
    put(j, "sm_activity_avg", g.sm_activity_avg);
    put(j, "tensor_activity_avg", g.tensor_activity_avg);
    put(j, "dram_activity_avg", g.dram_activity_avg);
    put(j, "gpu_utilization_avg", g.gpu_utilization_avg);
    put(j, "temperature_max_c", g.temperature_max_c);
    put(j, "sm_clock_avg_hz", g.sm_clock_avg_hz);
    json throttle = json::object();
    for (const auto& [reason, time] : g.throttle) {
      throttle[std::string(nvml::throttle_reason_name(reason))] = {
          {"seconds", time.seconds}, {"source", time.from_counter ? "counter" : "samples"}};
    }
    j["throttle"] = std::move(throttle);
    put(j, "lost_at_s", g.lost_at_s);
    if (!g.problems.empty()) j["problems"] = g.problems;
    j["command_pids"] = g.command_pids;
    put(j, "command_memory_peak_bytes", g.command_memory_peak_bytes);
    gpus.push_back(std::move(j));
  }
  json out = {{"started_unix_s", summary.started_unix_s},
              {"wall_s", summary.wall_s},
              {"interval_s", summary.interval_s},
              {"gpus", std::move(gpus)}};
  if (summary.energy_j) {
    out["energy_j"] = *summary.energy_j;
    out["energy_wh"] = joules_to_wh(*summary.energy_j);
  }
  out["command_gpus"] = summary.command_gpus ? json(*summary.command_gpus) : json(nullptr);
  const SamplerCost& c = summary.sampler;
  out["sampler"] = {{"ticks", c.ticks},
                    {"missed", c.missed},
                    {"cpu_per_tick_s", c.cpu_per_tick_s},
                    {"cpu_max_s", c.cpu_max_s},
                    {"wall_per_tick_s", c.wall_per_tick_s},
                    {"cpu_share_of_one_core",
                     summary.interval_s > 0 ? c.cpu_per_tick_s / summary.interval_s : 0.0}};
  json readings = json::array();
  for (const ReadingCost& r : c.readings) {
    readings.push_back({{"name", r.name},
                        {"calls", r.calls},
                        {"mean_s", r.mean_s},
                        {"once_a_second", r.once_a_second}});
  }
  out["sampler"]["readings"] = std::move(readings);
  return out;
}

}  // namespace gpuscope::telemetry::detail
