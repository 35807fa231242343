// What was measured on: the GPUs (identity, limits, datasheet), the runs (when, where, which
// versions), and any measurement no other section knows, listed plainly.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/report_model.h"

namespace gpuscope::report::detail {
namespace {

Value text_or_missing(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::monostate{};
  return *text;
}

// How many readings a GPU record holds: the fullest record of a GPU is the one shown.
int richness(const store::GpuRecord& g) {
  return g.pci_bus_id.has_value() + g.compute_capability.has_value() + g.sm_count.has_value() +
         g.memory_total_bytes.has_value() + g.power_limit_w.has_value() +
         g.power_min_limit_w.has_value() + g.power_max_limit_w.has_value() +
         g.sm_clock_max_hz.has_value() + g.pcie_generation_max.has_value() + g.peak.has_value();
}

bool known_measurement(const std::string& name) {
  if (name.rfind("trace_", 0) == 0) return true;  // the trace section's (report_trace.cc)
  namespace n = store::names;
  static const std::set<std::string> kKnown = {n::kGemmFlopPerS,
                                               n::kGemmWindowFlopPerS,
                                               n::kGemmErrors,
                                               n::kTemperatureMax,
                                               n::kThrottleSeconds,
                                               n::kPowerAvg,
                                               n::kEnergy,
                                               n::kFlopPerJoule,
                                               n::kSmClockAvg,
                                               n::kSmActivityAvg,
                                               n::kTensorActivityAvg,
                                               n::kMemoryBytesPerS,
                                               n::kHostLinkBytesPerS,
                                               n::kOverlapEfficiency,
                                               n::kSamplesPerS,
                                               n::kPeakMemory,
                                               n::kEnergyPerSample,
                                               "share_gain",
                                               "share_fairness",
                                               n::kLoss};
  return kKnown.count(name) > 0;
}

}  // namespace

void add_systems_section(ReportBuilder& b) {
  // One row per GPU (by UUID), from the run that described it most fully.
  std::vector<std::pair<const store::RunData*, const store::GpuRecord*>> gpus;
  std::map<std::string, std::vector<std::string>> seen_in;
  for (const store::RunData& run : b.runs()) {
    for (const store::GpuRecord& g : run.run.gpus) {
      std::string key = g.uuid.empty() ? fmt::format("{}#{}", g.name, g.gpu) : g.uuid;
      seen_in[key].push_back(ReportBuilder::run_label(run));
      auto it = std::find_if(gpus.begin(), gpus.end(), [&](const auto& p) {
        std::string other = p.second->uuid.empty()
                                ? fmt::format("{}#{}", p.second->name, p.second->gpu)
                                : p.second->uuid;
        return other == key;
      });
      if (it == gpus.end()) {
        gpus.emplace_back(&run, &g);
      } else if (richness(g) > richness(*it->second)) {
        *it = {&run, &g};
      }
    }
  }
  if (gpus.empty()) return;
  Table t;
  t.key = "systems_gpus";
  t.title = "GPUs";
  t.caption =
      "Each GPU once, from the run that described it most fully; power limits as "
      "current (min–max allowed).";
  t.columns = {{"gpu", "GPU", Unit::none},
               {"name", "name", Unit::none},
               {"uuid", "UUID", Unit::none},
               {"compute_capability", "CC", Unit::none},
               {"sm_count", "SMs", Unit::count},
               {"memory_total_bytes", "memory", Unit::bytes},
               {"power_limit_w", "power limit", Unit::watts},
               {"power_limits", "allowed", Unit::none},
               {"sm_clock_max_hz", "max SM clock", Unit::hertz},
               {"pcie", "PCIe", Unit::none},
               {"datasheet", "datasheet", Unit::none},
               {"host", "host", Unit::none},
               {"driver", "driver / CUDA", Unit::none},
               {"runs", "seen in", Unit::none}};
  for (const auto& [run, g] : gpus) {
    std::string key = g->uuid.empty() ? fmt::format("{}#{}", g->name, g->gpu) : g->uuid;
    std::string limits;
    if (g->power_min_limit_w && g->power_max_limit_w) {
      limits = fmt::format("{}–{}", format_value(*g->power_min_limit_w, Unit::watts),
                           format_value(*g->power_max_limit_w, Unit::watts));
    }
    std::string pcie;
    if (g->pcie_generation_max && g->pcie_width_max) {
      pcie = fmt::format("Gen{} x{}", *g->pcie_generation_max, *g->pcie_width_max);
    }
    std::string datasheet;
    if (g->peak) datasheet = g->peak->model + (g->peak->estimated ? " (estimated)" : "");
    Value versions = std::monostate{};
    if (run->run.driver_version || run->run.cuda_driver_version) {
      versions = fmt::format("{} / {}", run->run.driver_version.value_or("?"),
                             run->run.cuda_driver_version.value_or("?"));
    }
    std::string runs;
    for (const std::string& r : seen_in[key]) runs += (runs.empty() ? "" : "; ") + r;
    std::optional<double> memory;
    if (g->memory_total_bytes) memory = static_cast<double>(*g->memory_total_bytes);
    std::optional<double> sms;
    if (g->sm_count) sms = *g->sm_count;
    t.rows.push_back(
        {static_cast<double>(g->gpu), short_gpu_name(g->name), g->uuid,
         text_or_missing(g->compute_capability), optional_value(sms), optional_value(memory),
         optional_value(g->power_limit_w), limits.empty() ? Value(std::monostate{}) : Value(limits),
         optional_value(g->sm_clock_max_hz), pcie.empty() ? Value(std::monostate{}) : Value(pcie),
         datasheet.empty() ? Value(std::monostate{}) : Value(datasheet),
         run->run.host.empty() ? Value(std::monostate{}) : Value(run->run.host), versions, runs});
  }
  t.columns[0].unit = Unit::count;
  Section s;
  s.key = "systems";
  s.title = "Systems";
  s.intro = "The GPUs these results come from, and their limits.";
  s.blocks.push_back(std::move(t));
  b.add_section(std::move(s));
}

void add_other_measurements_section(ReportBuilder& b) {
  Table t;
  t.key = "other_measurements";
  t.title = "Other measurements";
  t.caption = "Measurements this report has no chart for, as recorded.";
  t.columns = {{"run", "run", Unit::none},      {"gpu", "GPU", Unit::none},
               {"name", "name", Unit::none},    {"value", "value", Unit::none},
               {"raw", "SI value", Unit::none}, {"unit", "unit", Unit::none},
               {"tags", "tags", Unit::none}};
  for (const store::RunData& run : b.runs()) {
    for (const store::Measurement& m : run.measurements) {
      if (known_measurement(m.name)) continue;
      Unit unit = unit_from_symbol(m.unit).value_or(Unit::none);
      t.rows.push_back({ReportBuilder::run_label(run),
                        m.gpu ? Value(fmt::format("GPU {}", *m.gpu)) : Value(std::monostate{}),
                        m.name,
                        m.value ? Value(format_value(*m.value, unit)) : Value(std::monostate{}),
                        m.value ? Value(*m.value) : Value(std::monostate{}), m.unit,
                        m.tags.empty() ? std::string() : m.tags.dump()});
    }
  }
  if (t.rows.empty()) return;
  Section s;
  s.key = "other";
  s.title = "Other measurements";
  s.blocks.push_back(std::move(t));
  b.add_section(std::move(s));
}

void add_runs_section(ReportBuilder& b) {
  if (b.runs().empty()) return;
  Table t;
  t.key = "runs";
  t.title = "Runs";
  t.caption = "Every run reported on, where it was read from and what it ran with.";
  t.columns = {{"run", "run", Unit::none},           {"kind", "kind", Unit::none},
               {"started", "started", Unit::none},   {"duration_s", "duration", Unit::seconds},
               {"host", "host", Unit::none},         {"command", "command", Unit::none},
               {"gpuscope", "gpuscope", Unit::none}, {"driver", "driver", Unit::none},
               {"cuda", "CUDA", Unit::none},         {"torch", "torch", Unit::none},
               {"gpus", "GPUs", Unit::count},        {"measurements", "measurements", Unit::count},
               {"source", "source", Unit::none}};
  for (const store::RunData& run : b.runs()) {
    const store::RunRecord& r = run.run;
    std::optional<double> duration;
    if (r.ended_unix_s && r.started_unix_s > 0) duration = *r.ended_unix_s - r.started_unix_s;
    auto text = [](const std::string& s) { return s.empty() ? Value(std::monostate{}) : Value(s); };
    t.rows.push_back({ReportBuilder::run_label(run), r.kind, format_time(r.started_unix_s),
                      optional_value(duration), text(r.host), text(r.command_line),
                      text(r.gpuscope_version), text_or_missing(r.driver_version),
                      text_or_missing(r.cuda_driver_version), text_or_missing(r.torch_version),
                      static_cast<double>(r.gpus.size()),
                      static_cast<double>(run.measurements.size()), text(run.source)});
  }
  Section s;
  s.key = "runs";
  s.title = "Runs";
  s.blocks.push_back(std::move(t));
  b.add_section(std::move(s));
}

}  // namespace gpuscope::report::detail
