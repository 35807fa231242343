// bench --gpus: rows grouped by configuration, each GPU count against the 1-GPU row.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <ostream>

#include "gpuscope/bench_scaling.h"
#include "report/table.h"

namespace gpuscope::bench {
namespace {

using report::TextTable;

// The row's label without "gpus=N" and "grad-sync=off": a row and its twin without sync share it.
std::string configuration_of(const RowSpec& spec) {
  RowSpec one = spec;
  one.gpus = 1;
  one.grad_sync = true;
  return one.label();
}

std::string or_dash(const std::optional<double>& v, auto&& format) {
  return v ? format(*v) : "-";
}

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The figures of `s` that come from the twin without gradient sync, `alone`.
void add_ceiling(const Row& alone, const std::optional<double>& one_gpu, ScalingRow& s) {
  if (alone.skipped) {
    s.no_sync_skip_reason = alone.skip_reason;
    return;
  }
  if (!alone.slowest_rank_samples_per_second) return;
  s.slowest_gpu_samples_per_second = alone.slowest_rank_samples_per_second;
  s.ceiling_samples_per_second = s.gpus * *alone.slowest_rank_samples_per_second;
  if (one_gpu && *one_gpu > 0)
    s.gpus_together = *s.ceiling_samples_per_second / (s.gpus * *one_gpu);
  if (s.samples_per_second && *s.ceiling_samples_per_second > 0) {
    s.communication = *s.samples_per_second / *s.ceiling_samples_per_second;
  }
}

}  // namespace

std::vector<ScalingRow> scaling_table(const std::vector<Row>& rows) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Row*>> groups;
  for (const Row& r : rows) {
    const std::string c = configuration_of(r.spec);
    if (!groups.contains(c)) order.push_back(c);
    groups[c].push_back(&r);
  }
  std::vector<ScalingRow> table;
  for (const std::string& c : order) {
    std::vector<const Row*> synced;
    std::map<int, const Row*> alone;  // the twins without sync, by GPU count
    for (const Row* r : groups[c]) {
      if (r->spec.grad_sync) {
        synced.push_back(r);
      } else {
        alone[r->spec.gpus] = r;
      }
    }
    std::stable_sort(synced.begin(), synced.end(),
                     [](const Row* a, const Row* b) { return a->spec.gpus < b->spec.gpus; });
    if (synced.empty() || synced.back()->spec.gpus < 2) continue;  // not a scaling question
    std::optional<double> one_gpu;
    for (const Row* r : synced) {
      if (r->spec.gpus == 1 && !r->skipped && r->samples_per_second)
        one_gpu = r->samples_per_second;
    }
    for (const Row* r : synced) {
      ScalingRow s;
      s.configuration = c;
      s.gpus = r->spec.gpus;
      s.skipped = r->skipped;
      s.skip_reason = r->skip_reason;
      if (!r->skipped) {
        s.samples_per_second = r->samples_per_second;
        if (one_gpu && *one_gpu > 0 && r->samples_per_second) {
          s.efficiency = *r->samples_per_second / (r->spec.gpus * *one_gpu);
        }
        s.collective_seconds = r->collective_seconds_per_step;
        s.exposed_seconds = r->exposed_seconds_per_step;
        s.overlap_fraction = r->overlap_fraction;
        s.memory_per_gpu_bytes = r->peak_reserved_per_gpu_bytes ? r->peak_reserved_per_gpu_bytes
                                                                : r->peak_reserved_bytes;
        s.all_reduce = r->all_reduce;
        s.all_reduce_fallback = r->all_reduce_fallback;
        s.optimizer_sharded = r->optimizer_sharded;
      }
      if (const auto twin = alone.find(s.gpus); twin != alone.end()) {
        add_ceiling(*twin->second, one_gpu, s);
      }
      table.push_back(std::move(s));
    }
  }
  return table;
}

void print_scaling_table(const std::vector<ScalingRow>& table, std::ostream& out) {
  if (table.empty()) return;
  const bool ceilings = std::any_of(table.begin(), table.end(), [](const ScalingRow& s) {
    return s.ceiling_samples_per_second || !s.no_sync_skip_reason.empty();
  });
  out << "\nScaling (data parallel, one rank per GPU; efficiency = samples/s / (GPUs x 1 GPU)):\n";
  std::vector<std::string> header = {"configuration", "GPUs",       "samples/s",
                                     "efficiency",    "all-reduce", "all-reduce/step",
                                     "exposed/step",  "overlapped", "memory/GPU"};
  if (ceilings) header.insert(header.end(), {"no-sync ceiling", "GPUs together", "communication"});
  TextTable t(header);
  const auto ms = [](double s) { return fmt::format("{:.2f} ms", s * 1e3); };
  const auto pct = [](double f) { return fmt::format("{:.1f}%", f * 100); };
  const auto rate = [](double v) { return fmt::format("{:.1f}", v); };
  for (const ScalingRow& s : table) {
    std::vector<std::string> cells;
    if (s.skipped) {
      cells = {s.configuration,
               std::to_string(s.gpus),
               "skipped: " + s.skip_reason,
               "",
               "",
               "",
               "",
               "",
               ""};
    } else {
      cells = {s.configuration,
               std::to_string(s.gpus),
               or_dash(s.samples_per_second, rate),
               or_dash(s.efficiency, pct),
               s.gpus > 1 ? s.all_reduce.value_or("-") +
                                (s.optimizer_sharded.value_or(false) ? ", AdamW sharded" : "")
                          : "",
               or_dash(s.collective_seconds, ms),
               or_dash(s.exposed_seconds, ms),
               or_dash(s.overlap_fraction, pct),
               or_dash(s.memory_per_gpu_bytes,
                       [](double b) { return fmt::format("{:.1f} GiB", b / (1ull << 30)); })};
    }
    if (ceilings) {
      const std::string ceiling = !s.no_sync_skip_reason.empty()
                                      ? "skipped: " + s.no_sync_skip_reason
                                      : or_dash(s.ceiling_samples_per_second, rate);
      cells.insert(cells.end(),
                   {ceiling, or_dash(s.gpus_together, pct), or_dash(s.communication, pct)});
    }
    t.add_row(std::move(cells));
  }
  t.print(out);
  // gpuscope-torch times the all-reduces of eager steps only: a captured step replays as one.
  const bool unmeasured = std::any_of(table.begin(), table.end(), [](const ScalingRow& s) {
    return s.gpus > 1 && !s.skipped && !s.collective_seconds;
  });
  if (unmeasured) {
    out << "  all-reduce/step, exposed/step, overlapped: '-' where the step ran as a CUDA graph, "
           "which is timed whole (--knob graphs=off adds eager rows that time them)\n";
  }
  for (const ScalingRow& s : table) {
    if (s.all_reduce_fallback) {
      out << fmt::format("  {} on {} GPUs: {}, not the copy engines: {}\n", s.configuration, s.gpus,
                         s.all_reduce.value_or("the backend"), *s.all_reduce_fallback);
    }
  }
  if (std::any_of(table.begin(), table.end(),
                  [](const ScalingRow& s) { return s.optimizer_sharded.value_or(false); })) {
    out << "  AdamW sharded: each GPU kept the optimizer's state for 1/N of the parameters, "
           "updated that part and sent it to the others (gpuscope-torch --shard-optimizer)\n";
  }
  if (ceilings) {
    out << "  no-sync ceiling = GPUs x the slowest GPU's samples/s while every GPU trains alone "
           "(--grad-sync off);\n"
           "  efficiency = GPUs together (ceiling / (GPUs x 1 GPU): clocks, power, a slower card) "
           "x communication (samples/s / ceiling)\n";
  }
}

nlohmann::json scaling_to_json(const std::vector<ScalingRow>& table) {
  nlohmann::json out = nlohmann::json::array();
  for (const ScalingRow& s : table) {
    out.push_back({{"configuration", s.configuration},
                   {"gpus", s.gpus},
                   {"status", s.skipped ? "skipped" : "ok"},
                   {"skip_reason", s.skipped ? nlohmann::json(s.skip_reason) : nullptr},
                   {"samples_per_second", opt(s.samples_per_second)},
                   {"efficiency", opt(s.efficiency)},
                   {"collective_seconds_per_step", opt(s.collective_seconds)},
                   {"exposed_seconds_per_step", opt(s.exposed_seconds)},
                   {"overlap_fraction", opt(s.overlap_fraction)},
                   {"memory_per_gpu_bytes", opt(s.memory_per_gpu_bytes)},
                   {"all_reduce", s.all_reduce ? nlohmann::json(*s.all_reduce) : nullptr},
                   {"all_reduce_fallback",
                    s.all_reduce_fallback ? nlohmann::json(*s.all_reduce_fallback) : nullptr},
                   {"optimizer_sharded",
                    s.optimizer_sharded ? nlohmann::json(*s.optimizer_sharded) : nullptr},
                   {"no_sync_ceiling_samples_per_second", opt(s.ceiling_samples_per_second)},
                   {"slowest_gpu_samples_per_second", opt(s.slowest_gpu_samples_per_second)},
                   {"gpus_together", opt(s.gpus_together)},
                   {"communication", opt(s.communication)},
                   {"no_sync_skip_reason", s.no_sync_skip_reason.empty()
                                               ? nlohmann::json(nullptr)
                                               : nlohmann::json(s.no_sync_skip_reason)}});
  }
  return out;
}

Result<std::vector<int>> parse_gpu_counts(const std::string& text) {
  std::vector<int> counts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    int n = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || n < 1) {
      return Status(Code::invalid_argument,
                    fmt::format("--gpus {}: expected GPU counts such as 1,2,4", text));
    }
    if (std::find(counts.begin(), counts.end(), n) != counts.end()) {
      return Status(Code::invalid_argument, fmt::format("--gpus {}: {} appears twice", text, n));
    }
    counts.push_back(n);
    start = comma + 1;
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

}  // namespace gpuscope::bench
