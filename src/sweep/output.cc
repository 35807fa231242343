// The sweep's JSON document and console table.
#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "gpuscope/sweep.h"

namespace gpuscope::sweep {
namespace {

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json change_json(const Recommendation::Change& c) {
  return {{"reference_limit_w", c.reference_limit_w},
          {"speed", c.speed},
          {"energy_per_sample", c.energy},
          {"temperature_c", optional_json(c.temperature_c)}};
}

std::string text_or_dash(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : "-";
}

nlohmann::json status_json(const Status& status) {
  if (status.ok()) return nullptr;
  return {{"code", std::string(code_name(status.code()))}, {"message", status.message()}};
}

nlohmann::json workload_json(const WorkloadResult& r) {
  nlohmann::json points = nlohmann::json::array();
  for (const Point& p : r.points) {
    nlohmann::json readings = nlohmann::json::array();
    for (const GpuReading& g : p.gpus) {
      readings.push_back({{"gpu", g.gpu},
                          {"enforced_power_limit_w", optional_json(g.enforced_limit_w)},
                          {"energy_j", optional_json(g.energy_j)},
                          {"energy_source", g.energy_from_counter ? "counter" : "power_integral"},
                          {"power_avg_w", optional_json(g.power_avg_w)},
                          {"power_peak_w", optional_json(g.power_peak_w)},
                          {"sm_clock_avg_hz", optional_json(g.sm_clock_avg_hz)},
                          {"memory_clock_avg_hz", optional_json(g.memory_clock_avg_hz)},
                          {"temperature_avg_c", optional_json(g.temperature_avg_c)},
                          {"temperature_max_c", optional_json(g.temperature_max_c)},
                          {"memory_temperature_avg_c", optional_json(g.memory_temperature_avg_c)},
                          {"fan_avg", optional_json(g.fan_avg)},
                          {"throttle_s", g.throttle_s}});
    }
    nlohmann::json point = {
        {"power_limit_w", p.limit_w}, {"refined", p.refined}, {"started_s", p.started_s}};
    if (p.skipped) {
      point["skipped"] = *p.skipped;
    } else {
      point.update({{"samples_per_second", p.samples_per_second},
                    {"window_samples_per_second", p.window_samples_per_second},
                    {"stable", p.stable},
                    {"seconds", p.seconds},
                    {"energy_j", optional_json(p.energy_j)},
                    {"energy_source", p.energy_from_counter ? "counter" : "power_integral"},
                    {"power_avg_w", optional_json(p.power_avg_w)},
                    {"joules_per_sample", optional_json(p.joules_per_sample)},
                    {"temperature_max_c", optional_json(p.temperature_max_c)},
                    {"gpus", readings}});
    }
    points.push_back(std::move(point));
  }
  nlohmann::json knees = nlohmann::json::array();
  for (const Knee& k : r.knees) {
    knees.push_back(
        {{"fraction", k.fraction}, {"limit_w", k.limit_w}, {"at_lowest_limit", k.at_lowest_limit}});
  }
  nlohmann::json recommendation = nullptr;
  if (r.recommendation) {
    recommendation = {
        {"limit_w", r.recommendation->limit_w},
        {"text", r.recommendation->text},
        {"vs_max", change_json(r.recommendation->vs_max)},
        {"vs_prior", r.recommendation->vs_prior ? change_json(*r.recommendation->vs_prior)
                                                : nlohmann::json(nullptr)}};
  }
  std::string command;
  for (const std::string& arg : r.spec.command) command += (command.empty() ? "" : " ") + arg;
  return {{"label", r.spec.label},
          {"command", command},
          {"tags", r.spec.tags},
          {"throughput_unit", r.spec.unit},
          {"skipped", r.skipped ? nlohmann::json(*r.skipped) : nlohmann::json(nullptr)},
          {"ended", status_json(r.ended)},
          {"points", points},
          {"knees", knees},
          {"min_energy_limit_w", optional_json(r.min_energy_limit_w)},
          {"min_energy_delay_limit_w", optional_json(r.min_energy_delay_limit_w)},
          {"recommendation", recommendation}};
}

// What a rate counts, for "J per ...": "sample" of samples/s, "TFLOP" of TFLOP/s.
std::string counted(const std::string& unit) {
  if (unit == "samples/s") return "sample";
  return unit.size() > 2 && unit.ends_with("/s") ? unit.substr(0, unit.size() - 2) : unit;
}

void print_workload(const WorkloadResult& r, bool dry_run, std::ostream& out) {
  out << fmt::format("\n{} ({})\n", r.spec.label, r.spec.unit);
  if (r.skipped) {
    out << "skipped: " << *r.skipped << '\n';
    return;
  }
  std::vector<const Point*> points;
  double best = 0;
  for (const Point& p : r.points) {
    points.push_back(&p);
    if (!p.skipped) best = std::max(best, p.samples_per_second);
  }
  std::sort(points.begin(), points.end(),
            [](const Point* a, const Point* b) { return a->limit_w > b->limit_w; });
  const std::string per = counted(r.spec.unit);
  out << fmt::format("{:>7}  {:>12}  {:>6}  {:>9}  {:>10}  {:>5}  {:>8}  {}\n", "limit",
                     r.spec.unit, "speed", "power", "J/" + per, "temp", "SM clock", "throttled by");
  for (const Point* p : points) {
    if (p->skipped) {
      out << fmt::format("{:>5.0f} W  skipped: {}\n", p->limit_w, *p->skipped);
      continue;
    }
    std::optional<double> clock;
    std::string throttled;
    for (const GpuReading& g : p->gpus) {
      if (g.sm_clock_avg_hz) clock = std::max(clock.value_or(0), *g.sm_clock_avg_hz);
      for (const auto& [reason, seconds] : g.throttle_s) {
        if (seconds > 0.1 * p->seconds && throttled.find(reason) == std::string::npos) {
          throttled += (throttled.empty() ? "" : ",") + reason;
        }
      }
    }
    out << fmt::format(
        "{:>5.0f} W  {:>12.2f}  {:>5.1f}%  {:>7} W  {:>10}  {:>3} °C  {:>4} MHz  {}{}\n",
        p->limit_w, p->samples_per_second, best > 0 ? 100 * p->samples_per_second / best : 0.0,
        text_or_dash(p->power_avg_w, "{:.1f}"), text_or_dash(p->joules_per_sample, "{:.4f}"),
        text_or_dash(p->temperature_max_c, "{:.0f}"),
        text_or_dash(clock ? std::optional<double>(*clock / 1e6) : std::nullopt, "{:.0f}"),
        throttled.empty() ? "-" : throttled, p->stable ? "" : "  (unstable)");
  }
  if (!points.empty() && !points.front()->energy_from_counter) {
    out << "energy: integrated from power samples (this GPU has no energy counter)\n";
  }
  if (!dry_run) {
    for (const Knee& k : r.knees) {
      out << fmt::format("{:.0f} % of the speed from {:.0f} W{}\n", 100 * k.fraction, k.limit_w,
                         k.at_lowest_limit ? " (the lowest limit measured: maybe lower)" : "");
    }
    if (r.min_energy_limit_w) {
      out << fmt::format("least energy per {} at {:.0f} W; least energy x delay at {:.0f} W\n", per,
                         *r.min_energy_limit_w, r.min_energy_delay_limit_w.value_or(0));
    }
    if (r.recommendation) out << "answer: " << r.recommendation->text << '\n';
  }
  if (!r.ended.ok()) out << "the workload stopped early: " << r.ended.message() << '\n';
}

}  // namespace

nlohmann::json sweep_to_json(const SweepResult& r) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuPrior& g : r.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"prior_power_limit_w", g.prior_limit_w},
                    {"default_power_limit_w", optional_json(g.default_limit_w)},
                    {"min_power_limit_w", g.min_limit_w},
                    {"max_power_limit_w", g.max_limit_w}});
  }
  nlohmann::json workloads = nlohmann::json::array();
  for (const WorkloadResult& w : r.workloads) workloads.push_back(workload_json(w));
  return {{"kind", kSweepJsonKind},
          {"schema_version", kSweepSchemaVersion},
          {"knob", "power_limit"},
          {"dry_run", r.dry_run},
          {"privileged", r.privileged},
          {"started_unix_s", r.started_unix_s},
          {"wall_s", r.wall_s},
          {"gpus", gpus},
          {"plan_w", r.plan_w},
          {"stopped", status_json(r.stopped)},
          {"restore", {{"all_restored", r.restored_all}, {"notes", r.restore_notes}}},
          {"workloads", workloads}};
}

void print_sweep(const SweepResult& r, std::ostream& out) {
  for (const WorkloadResult& w : r.workloads) print_workload(w, r.dry_run, out);
  if (!r.stopped.ok()) out << "the sweep stopped early: " << r.stopped.message() << '\n';
}

}  // namespace gpuscope::sweep
