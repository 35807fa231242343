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

// The row's label without "gpus=N".
std::string configuration_of(const RowSpec& spec) {
  RowSpec one = spec;
  one.gpus = 1;
  return one.label();
}

std::string or_dash(const std::optional<double>& v, auto&& format) {
  return v ? format(*v) : "-";
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
    std::vector<const Row*>& group = groups[c];
    std::stable_sort(group.begin(), group.end(),
                     [](const Row* a, const Row* b) { return a->spec.gpus < b->spec.gpus; });
    if (group.back()->spec.gpus < 2) continue;  // one GPU only: not a scaling question
    std::optional<double> one_gpu;
    for (const Row* r : group) {
      if (r->spec.gpus == 1 && !r->skipped && r->samples_per_second)
        one_gpu = r->samples_per_second;
    }
    for (const Row* r : group) {
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
      }
      table.push_back(std::move(s));
    }
  }
  return table;
}

void print_scaling_table(const std::vector<ScalingRow>& table, std::ostream& out) {
  if (table.empty()) return;
  out << "\nScaling (data parallel, one rank per GPU; efficiency = samples/s / (GPUs x 1 GPU)):\n";
  TextTable t({"configuration", "GPUs", "samples/s", "efficiency", "all-reduce/step",
               "exposed/step", "overlapped", "memory/GPU"});
  const auto ms = [](double s) { return fmt::format("{:.2f} ms", s * 1e3); };
  const auto pct = [](double f) { return fmt::format("{:.1f}%", f * 100); };
  for (const ScalingRow& s : table) {
    if (s.skipped) {
      t.add_row({s.configuration, std::to_string(s.gpus), "skipped: " + s.skip_reason, "", "", "",
                 "", ""});
      continue;
    }
    t.add_row({s.configuration, std::to_string(s.gpus),
               or_dash(s.samples_per_second, [](double v) { return fmt::format("{:.1f}", v); }),
               or_dash(s.efficiency, pct), or_dash(s.collective_seconds, ms),
               or_dash(s.exposed_seconds, ms), or_dash(s.overlap_fraction, pct),
               or_dash(s.memory_per_gpu_bytes,
                       [](double b) { return fmt::format("{:.1f} GiB", b / (1ull << 30)); })});
  }
  t.print(out);
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
