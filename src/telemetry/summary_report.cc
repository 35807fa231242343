// The monitor's summary, for people and for programs.
#include <fmt/format.h>

#include <ostream>

#include "gpuscope/monitor.h"
#include "telemetry/live_layout.h"
#include "telemetry/sample_json.h"

namespace gpuscope::telemetry {
namespace {

std::string pct(std::optional<double> f) {
  return f ? fmt::format("{:.1f} %", *f * 100) : "n/a";
}

// For reading only (the command ran without a shell): quoted where a shell would need it.
std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    const bool plain =
        !a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>()*?[]#~") == std::string::npos;
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    s += (s.empty() ? "" : " ") + (plain ? a : quoted);
  }
  return s;
}

}  // namespace

void print_summary(const MonitorResult& result, std::ostream& out) {
  const Summary& s = result.summary;
  std::string head = fmt::format("gpuscope monitor: {:.1f} s, sampled every {:.0f} ms", s.wall_s,
                                 s.interval_s * 1000);
  if (result.command && result.command->start_error) {
    head += fmt::format("; `{}` did not start: {}", command_line(result.command->argv),
                        *result.command->start_error);
  } else if (result.command) {
    head += fmt::format("; `{}` (pid {}) {}", command_line(result.command->argv),
                        result.command->pid, result.command->exit.describe());
  } else if (result.interrupted) {
    head += "; stopped by a signal";
  }
  out << head << '\n';
  for (const GpuSummary& g : s.gpus) {
    out << fmt::format("GPU {}  {}  ({}, {})", g.gpu.target.gpu_index, g.gpu.target.name,
                       g.gpu.target.gpu_uuid, g.gpu.target.pci_bus_id.value_or(""));
    if (s.command_gpus) {
      out << (g.command_pids.empty() ? "  not used by the command" : "  used by the command");
    }
    out << '\n';
    if (g.lost_at_s)
      out << fmt::format("  LOST            stopped answering at {:.1f} s\n", *g.lost_at_s);
    if (g.energy) {
      out << fmt::format("  energy          {:.1f} J ({:.4f} Wh) over {:.1f} s, {}\n",
                         g.energy->joules, g.energy->joules / 3600, g.energy->seconds,
                         g.energy->source == EnergySource::counter
                             ? "from the energy counter"
                             : "integrated from power (no energy counter)");
    } else {
      out << "  energy          n/a (neither an energy counter nor power readings)\n";
    }
    if (g.power_avg_w || g.power_peak_w) {
      out << fmt::format("  power           avg {}, peak {}\n",
                         g.power_avg_w ? fmt::format("{:.1f} W", *g.power_avg_w) : "n/a",
                         g.power_peak_w ? fmt::format("{:.1f} W", *g.power_peak_w) : "n/a");
    }
    if (g.memory_peak_bytes) {
      std::string line =
          fmt::format("  memory          peak {}", detail::format_bytes(*g.memory_peak_bytes));
      if (g.gpu.target.memory_total_bytes) {
        line += fmt::format(
            " of {}", detail::format_bytes(static_cast<double>(*g.gpu.target.memory_total_bytes)));
      }
      if (g.command_memory_peak_bytes) {
        line +=
            fmt::format(" (the command: {})", detail::format_bytes(*g.command_memory_peak_bytes));
      }
      out << line << '\n';
    }
    if (g.gpu.gpm) {
      out << fmt::format("  SM activity     {}  (time-weighted, GPM)\n", pct(g.sm_activity_avg));
      out << fmt::format("  tensor activity {}\n", pct(g.tensor_activity_avg));
      out << fmt::format("  DRAM activity   {}\n", pct(g.dram_activity_avg));
    } else {
      out << "  SM/tensor activity n/a (GPM needs Hopper or newer)\n";
    }
    out << fmt::format(
        "  GPU duty cycle  {}  (NVML \"utilization\": time a kernel ran, not how much of the "
        "GPU)\n",
        pct(g.gpu_utilization_avg));
    // The total is the number `gpuscope report` shows for the recording.
    std::string throttle;
    double total = 0;
    for (const auto& [reason, time] : g.throttle) {
      if (time.seconds <= 0) continue;
      total += time.seconds;
      throttle += fmt::format("{}{} {:.2f} s{}", throttle.empty() ? "" : ", ",
                              nvml::throttle_reason_name(reason), time.seconds,
                              time.from_counter ? "" : " from samples");
    }
    if (!throttle.empty()) throttle = fmt::format("{:.2f} s ({})", total, throttle);
    if (g.throttle.empty()) throttle = "n/a";
    if (throttle.empty()) throttle = "none";
    out << "  throttled       " << throttle << '\n';
    if (g.temperature_max_c) {
      out << fmt::format("  temperature     max {:.0f} C", *g.temperature_max_c);
      if (g.sm_clock_avg_hz)
        out << fmt::format(", SM clock avg {:.0f} MHz", *g.sm_clock_avg_hz / 1e6);
      out << '\n';
    }
    for (const std::string& p : g.problems) out << "  problem         " << p << '\n';
  }
  if (s.gpus.size() > 1 && s.energy_j) {
    out << fmt::format("all GPUs: {:.1f} J ({:.4f} Wh)\n", *s.energy_j, *s.energy_j / 3600);
  }
  if (result.command && !s.command_gpus) {
    out << "GPUs used by the command: unknown (the driver's process list was not readable)\n";
  } else if (result.command && s.command_gpus && s.command_gpus->empty()) {
    out << "GPUs used by the command: none seen (or its processes are not visible from here)\n";
  }
  const SamplerCost& c = s.sampler;
  out << fmt::format(
      "sampler: {} rounds, {} missed, CPU {:.0f} us per round (max {:.0f} us), "
      "{:.3f}% of one core\n",
      c.ticks, c.missed, c.cpu_per_tick_s * 1e6, c.cpu_max_s * 1e6,
      s.interval_s > 0 ? 100 * c.cpu_per_tick_s / s.interval_s : 0.0);
  if (!c.readings.empty()) {
    std::string costs, slowed;
    for (const ReadingCost& r : c.readings) {
      costs += fmt::format("{}{} {:.0f}", costs.empty() ? "" : ", ", r.name, r.mean_s * 1e6);
      if (r.once_a_second) slowed += (slowed.empty() ? "" : ", ") + r.name;
    }
    out << "NVML calls, us each: " << costs << '\n';
    if (!slowed.empty()) out << "read once a second for their cost: " << slowed << '\n';
  }
  if (result.listening) out << "served /metrics on " << *result.listening << '\n';
  for (const std::string& f : result.sink_failures) out << "sink failed: " << f << '\n';
}

nlohmann::json summary_to_json(const MonitorResult& result) {
  nlohmann::json j = {{"kind", "gpuscope.monitor.summary"},
                      {"schema_version", kSummarySchemaVersion}};
  j.update(detail::summary_core_to_json(result.summary));
  if (result.command) {
    const ProcessExit& e = result.command->exit;
    nlohmann::json c = {
        {"argv", result.command->argv}, {"pid", result.command->pid}, {"wall_s", e.wall_seconds}};
    if (e.exit_code) c["exit_code"] = *e.exit_code;
    if (e.term_signal) c["signal"] = *e.term_signal;
    if (result.command->start_error) c["start_error"] = *result.command->start_error;
    j["command"] = std::move(c);
  }
  j["interrupted"] = result.interrupted;
  j["sink_failures"] = result.sink_failures;
  if (result.listening) j["listening"] = *result.listening;
  return j;
}

}  // namespace gpuscope::telemetry
