// Side by side: the same measurements on several GPUs or in several runs (GPU vs GPU, today vs
// last week), each against the first one given.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/report_bench_rows.h"
#include "report/report_burn_rows.h"

namespace gpuscope::report::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One compared value: which entry, which row of the comparison, the number.
struct Point {
  Entry entry;
  std::string row;
  double value = 0;
};

struct Comparison {
  std::vector<Entry> entries;
  std::vector<std::string> rows;
  std::vector<Point> points;
  std::optional<double> value(const Entry& e, const std::string& row) const {
    for (const Point& p : points) {
      if (same_entry(p.entry, e) && p.row == row) return p.value;
    }
    return std::nullopt;
  }
};

// `rank` orders the rows (precisions in gpuscope's order, ...); equal ranks keep their order.
template <typename Rank>
Comparison compare(const std::vector<Point>& points, Rank rank) {
  Comparison c;
  c.points = points;
  for (const Point& p : points) {
    if (std::none_of(c.entries.begin(), c.entries.end(),
                     [&](const Entry& e) { return same_entry(e, p.entry); })) {
      c.entries.push_back(p.entry);
    }
    if (std::find(c.rows.begin(), c.rows.end(), p.row) == c.rows.end()) c.rows.push_back(p.row);
  }
  std::stable_sort(c.rows.begin(), c.rows.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  return c;
}

// Rows x entries, each later entry also as a ratio to the first.
Table comparison_table(const ReportBuilder& b, const Comparison& c, bool with_run,
                       const std::string& key, const std::string& title,
                       const std::string& row_title, Unit unit) {
  Table t;
  t.key = key;
  t.title = title;
  t.caption = "(2)/(1) is column (2) against column (1), the first GPU or run given.";
  t.columns.push_back({"row", row_title, Unit::none});
  for (std::size_t i = 0; i < c.entries.size(); ++i) {
    t.columns.push_back({fmt::format("value_{}", i),
                         fmt::format("({}) {}", i + 1, b.entry_label(c.entries[i], with_run)),
                         unit});
  }
  for (std::size_t i = 1; i < c.entries.size(); ++i) {
    t.columns.push_back({fmt::format("ratio_{}", i), fmt::format("({})/(1)", i + 1), Unit::factor});
  }
  for (const std::string& row : c.rows) {
    std::vector<Value> cells = {row};
    for (const Entry& e : c.entries) {
      auto v = c.value(e, row);
      // if/else rather than a ?: of two temporaries: GCC 12 at -O2 warns (falsely) that the
      // moved-from variant's string may be uninitialized.
      if (v) {
        cells.emplace_back(*v);
      } else {
        cells.emplace_back(std::monostate{});
      }
    }
    auto base = c.value(c.entries.front(), row);
    for (std::size_t i = 1; i < c.entries.size(); ++i) {
      auto v = c.value(c.entries[i], row);
      if (v && base && *base > 0) {
        cells.emplace_back(*v / *base);
      } else {
        cells.emplace_back(std::monostate{});
      }
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

Chart ratio_chart(const ReportBuilder& b, const Comparison& c, bool with_run,
                  const std::string& key, const std::string& title, const std::string& x_title) {
  Chart chart;
  chart.key = key;
  chart.title = title;
  chart.caption =
      fmt::format("1.0 = {}; above 1 is faster.", b.entry_label(c.entries.front(), with_run));
  chart.kind = ChartKind::bars;
  chart.x_title = x_title;
  chart.y_title = "relative to the first";
  chart.y_unit = Unit::factor;
  auto base_of = [&](const std::string& row) { return c.value(c.entries.front(), row); };
  for (std::size_t i = 0; i < c.entries.size(); ++i) {
    Series s;
    s.name = b.entry_label(c.entries[i], with_run);
    s.reference = i == 0;
    s.categories = c.rows;
    for (const std::string& row : c.rows) {
      auto v = c.value(c.entries[i], row);
      auto base = base_of(row);
      bool ok = v && base && *base > 0;
      s.y.push_back(ok ? *v / *base : kNaN);
      s.labels.push_back(ok && i > 0 ? format_value(*v / *base, Unit::factor) : "");
    }
    chart.series.push_back(std::move(s));
  }
  return chart;
}

}  // namespace

void add_comparison_section(ReportBuilder& b) {
  BurnRows burn = collect_burn_rows(b);
  BenchRows bench = collect_bench_rows(b);
  Section s;
  s.key = "compare";
  s.title = "Comparison";
  s.intro = "The same measurements side by side: GPU against GPU, run against run.";

  std::vector<Point> gemm;
  for (const GemmRow& row : burn.gemm) {
    if (row.median) gemm.push_back({row.entry, row.precision, *row.median});
  }
  Comparison gemm_c =
      compare(gemm, [](const std::string& precision) { return precision_rank(precision); });
  if (gemm_c.entries.size() > 1) {
    s.blocks.push_back(ratio_chart(b, gemm_c, burn.runs > 1, "compare_gemm",
                                   "Matrix throughput relative to the first", "precision"));
    std::vector<analysis::StartTemperature> starts;
    for (const GemmRow& row : burn.gemm) {
      if (row.median && row.temperature_start_c) {
        starts.push_back(
            {row.precision, b.entry_label(row.entry, burn.runs > 1), *row.temperature_start_c});
      }
    }
    if (auto gap = analysis::start_temperature_gap(starts)) {
      s.blocks.push_back(
          Paragraph{analysis::text(*gap) + " (" + analysis::subjects_text(*gap) + ")."});
      b.add_finding(std::move(*gap));
    }
    s.blocks.push_back(comparison_table(b, gemm_c, burn.runs > 1, "compare_gemm",
                                        "Matrix throughput", "precision", Unit::flop_per_second));
  }
  std::vector<Point> bandwidth;
  for (const BandwidthRow& row : burn.memory) {
    if (row.bytes_per_s) bandwidth.push_back({row.entry, "memory " + row.what, *row.bytes_per_s});
  }
  for (const BandwidthRow& row : burn.host_link) {
    if (row.bytes_per_s) bandwidth.push_back({row.entry, row.what, *row.bytes_per_s});
  }
  Comparison bandwidth_c = compare(bandwidth, [](const std::string& what) {
    static const char* kOrder[] = {"h2d pinned",   "d2h pinned",   "bidirectional pinned",
                                   "h2d pageable", "d2h pageable", "bidirectional pageable"};
    if (what.rfind("memory ", 0) == 0) return 0;
    for (int i = 0; i < 6; ++i) {
      if (what == kOrder[i]) return i + 1;
    }
    return 7;
  });
  if (bandwidth_c.entries.size() > 1) {
    s.blocks.push_back(comparison_table(b, bandwidth_c, burn.runs > 1, "compare_bandwidth",
                                        "Bandwidth", "what", Unit::bytes_per_second));
  }
  std::vector<Point> modes;
  for (const BenchRow& row : bench.rows) {
    if (row.samples_per_s) modes.push_back({row.entry, row.key(), *row.samples_per_s});
  }
  Comparison modes_c = compare(modes, [](const std::string&) { return 0; });
  if (modes_c.entries.size() > 1) {
    s.blocks.push_back(ratio_chart(b, modes_c, bench.runs > 1, "compare_bench",
                                   "Training and inference throughput relative to the first",
                                   "model, task, mode"));
    s.blocks.push_back(comparison_table(b, modes_c, bench.runs > 1, "compare_bench",
                                        "Throughput (samples/s)", "model, task, mode",
                                        Unit::per_second));
  }
  if (!s.blocks.empty()) b.add_section(std::move(s));
}

}  // namespace gpuscope::report::detail
