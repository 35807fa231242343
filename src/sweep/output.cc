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

// The JSON's names of the knob's values: a power sweep keeps the names of schema version 1
// ("power_limit_w" per point, "limit_w" per knee, "plan_w"); a clock sweep names them in MHz.
struct Keys {
  const char* point;
  const char* knee;  // also the recommendation's
  const char* plan;
  const char* reference;
  const char* min_energy;
  const char* min_energy_delay;
};

Keys keys_of(Knob knob) {
  if (knob == Knob::locked_clocks) {
    return {"sm_clock_lock_mhz",
            "sm_clock_lock_mhz",
            "plan_mhz",
            "reference_sm_clock_lock_mhz",
            "min_energy_sm_clock_lock_mhz",
            "min_energy_delay_sm_clock_lock_mhz"};
  }
  return {"power_limit_w",           "limit_w", "plan_w", "reference_limit_w", "min_energy_limit_w",
          "min_energy_delay_limit_w"};
}

nlohmann::json change_json(const Recommendation::Change& c, const Keys& keys) {
  return {{keys.reference, c.reference},
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

nlohmann::json workload_json(const WorkloadResult& r, Knob knob) {
  const Keys keys = keys_of(knob);
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
        {keys.point, p.value}, {"refined", p.refined}, {"started_s", p.started_s}};
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
        {{"fraction", k.fraction}, {keys.knee, k.value}, {"at_lowest_limit", k.at_lowest_limit}});
  }
  nlohmann::json recommendation = nullptr;
  if (r.recommendation) {
    recommendation = {
        {keys.knee, r.recommendation->value},
        {"text", r.recommendation->text},
        {"vs_max", change_json(r.recommendation->vs_max, keys)},
        {"vs_prior", r.recommendation->vs_prior ? change_json(*r.recommendation->vs_prior, keys)
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
          {keys.min_energy, optional_json(r.min_energy_value)},
          {keys.min_energy_delay, optional_json(r.min_energy_delay_value)},
          {"recommendation", recommendation}};
}

// What a rate counts, for "J per ...": "sample" of samples/s, "TFLOP" of TFLOP/s.
std::string counted(const std::string& unit) {
  if (unit == "samples/s") return "sample";
  return unit.size() > 2 && unit.ends_with("/s") ? unit.substr(0, unit.size() - 2) : unit;
}

void print_workload(const WorkloadResult& r, Knob knob, bool dry_run, std::ostream& out) {
  const char* unit = knob_unit(knob);
  const bool clocks = knob == Knob::locked_clocks;
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
            [](const Point* a, const Point* b) { return a->value > b->value; });
  const std::string per = counted(r.spec.unit);
  out << fmt::format("{:>8}  {:>12}  {:>6}  {:>9}  {:>10}  {:>5}  {:>8}  {}\n",
                     clocks ? "SM lock" : "limit", r.spec.unit, "speed", "power", "J/" + per,
                     "temp", "SM clock", "throttled by");
  for (const Point* p : points) {
    if (p->skipped) {
      out << fmt::format("{:>5.0f} {:<3}  skipped: {}\n", p->value, unit, *p->skipped);
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
        "{:>5.0f} {:<3}  {:>12.2f}  {:>5.1f}%  {:>7} W  {:>10}  {:>3} °C  {:>4} MHz  {}{}\n",
        p->value, unit, p->samples_per_second, best > 0 ? 100 * p->samples_per_second / best : 0.0,
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
      out << fmt::format(
          "{:.0f} % of the speed from {:.0f} {}{}\n", 100 * k.fraction, k.value, unit,
          k.at_lowest_limit
              ? fmt::format(" (the lowest {} measured: maybe lower)", clocks ? "lock" : "limit")
              : "");
    }
    if (r.min_energy_value) {
      out << fmt::format("least energy per {} at {:.0f} {}; least energy x delay at {:.0f} {}\n",
                         per, *r.min_energy_value, unit, r.min_energy_delay_value.value_or(0),
                         unit);
    }
    if (r.recommendation) out << "answer: " << r.recommendation->text << '\n';
  }
  if (!r.ended.ok()) out << "the workload stopped early: " << r.ended.message() << '\n';
}

}  // namespace

nlohmann::json sweep_to_json(const SweepResult& r) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuPrior& g : r.gpus) {
    nlohmann::json gpu = {{"index", g.index},
                          {"uuid", g.uuid},
                          {"name", g.name},
                          {"prior_power_limit_w", g.prior_limit_w},
                          {"default_power_limit_w", optional_json(g.default_limit_w)},
                          {"min_power_limit_w", g.min_limit_w},
                          {"max_power_limit_w", g.max_limit_w}};
    if (r.knob == Knob::locked_clocks && !g.sm_clocks_mhz.empty()) {
      // NVML cannot read a lock back: the prior setting is recorded as the reset restores it.
      gpu["prior_sm_clock_lock"] = "unlocked";
      gpu["lockable_sm_clocks_mhz"] = g.sm_clocks_mhz;
    }
    gpus.push_back(std::move(gpu));
  }
  nlohmann::json workloads = nlohmann::json::array();
  for (const WorkloadResult& w : r.workloads) workloads.push_back(workload_json(w, r.knob));
  return {{"kind", kSweepJsonKind},
          {"schema_version", kSweepSchemaVersion},
          {"knob", knob_name(r.knob)},
          {"unit", knob_unit(r.knob)},
          {"dry_run", r.dry_run},
          {"privileged", r.privileged},
          {"started_unix_s", r.started_unix_s},
          {"wall_s", r.wall_s},
          {"gpus", gpus},
          {keys_of(r.knob).plan, r.plan},
          {"stopped", status_json(r.stopped)},
          {"restore", {{"all_restored", r.restored_all}, {"notes", r.restore_notes}}},
          {"workloads", workloads}};
}

void print_sweep(const SweepResult& r, std::ostream& out) {
  for (const WorkloadResult& w : r.workloads) print_workload(w, r.knob, r.dry_run, out);
  if (!r.stopped.ok()) out << "the sweep stopped early: " << r.stopped.message() << '\n';
}

}  // namespace gpuscope::sweep
