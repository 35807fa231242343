// The burn section: matrix throughput per precision against the datasheet, device memory and
// host-link bandwidth, and what the GPU did meanwhile (temperature, throttling, power).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "gpuscope/precision.h"
#include "report/report_burn_rows.h"

namespace gpuscope::report::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string throttle_text(const GemmRow& row) {
  std::string out;
  for (const auto& [reason, seconds] : row.throttle) {
    if (reason == "gpu_idle") continue;  // between windows, not a slowdown
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", reason, format_value(seconds, Unit::seconds));
  }
  return out.empty() ? "none" : out;
}

// Distinct entries in first-seen order.
template <typename Rows>
std::vector<Entry> entries_of(const Rows& rows) {
  std::vector<Entry> out;
  for (const auto& row : rows) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const Entry& e) {
      return e.run == row.entry.run && e.gpu_number == row.entry.gpu_number;
    });
    if (!seen) out.push_back(row.entry);
  }
  return out;
}

Table gemm_table(const ReportBuilder& b, const BurnRows& rows, bool label_entries) {
  Table t;
  t.key = "burn_gemm";
  t.title = "Matrix throughput per precision";
  t.caption =
      "Median over ~1 s windows of n×n×n GEMMs (cuBLASLt, random inputs, every result "
      "verified); % of peak against the datasheet's dense rate. int8 counts integer "
      "operations (OP/s, OP/J). Power, temperature and throttling are over each "
      "precision's timed span; \"start temp\" is the GPU's temperature as it began.";
  if (label_entries) t.columns.push_back({"gpu", "GPU", Unit::none});
  t.columns.insert(t.columns.end(), {{"precision", "precision", Unit::none},
                                     {"median_flop_per_s", "median", Unit::flop_per_second},
                                     {"min_flop_per_s", "min", Unit::flop_per_second},
                                     {"max_flop_per_s", "max", Unit::flop_per_second},
                                     {"peak_flop_per_s", "datasheet", Unit::flop_per_second},
                                     {"fraction_of_peak", "% of peak", Unit::ratio},
                                     {"errors", "errors", Unit::count},
                                     {"temperature_start_c", "start temp", Unit::celsius},
                                     {"temperature_max_c", "max temp", Unit::celsius},
                                     {"power_avg_w", "avg power", Unit::watts},
                                     {"flop_per_j", "efficiency", Unit::flop_per_joule},
                                     {"throttled", "throttled", Unit::none},
                                     {"note", "note", Unit::none}});
  for (const GemmRow& row : rows.gemm) {
    std::vector<Value> cells;
    if (label_entries) cells.push_back(b.entry_label(row.entry, rows.runs > 1));
    cells.push_back(row.precision);
    cells.push_back(optional_value(row.median));
    cells.push_back(optional_value(row.min));
    cells.push_back(optional_value(row.max));
    cells.push_back(optional_value(row.peak));
    cells.push_back(optional_value(row.fraction_of_peak()));
    cells.push_back(optional_value(row.errors));
    cells.push_back(optional_value(row.temperature_start_c));
    cells.push_back(optional_value(row.temperature_max_c));
    cells.push_back(optional_value(row.power_avg_w));
    cells.push_back(optional_value(row.flop_per_j));
    cells.push_back(row.median && row.throttle_measured ? Value(throttle_text(row))
                                                        : Value(std::monostate{}));
    cells.push_back(row.skipped.empty() ? std::string() : "skipped: " + row.skipped);
    if (rate_unit(row.precision) == "OP/s") {  // int8: integer operations
      for (std::size_t c = 0; c < t.columns.size(); ++c) {
        const Unit unit = t.columns[c].unit;
        if (unit == Unit::flop_per_second) t.cell_units[{t.rows.size(), c}] = Unit::op_per_second;
        if (unit == Unit::flop_per_joule) t.cell_units[{t.rows.size(), c}] = Unit::op_per_joule;
      }
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

Chart gemm_chart(const ReportBuilder& b, const BurnRows& rows, bool label_entries) {
  Chart c;
  c.key = "burn_gemm_vs_datasheet";
  c.title = "Matrix throughput: measured vs datasheet";
  c.caption =
      "Bars: the median measured rate; hatched: the datasheet's dense peak. The label on "
      "each bar is its % of the datasheet.";
  c.kind = ChartKind::bars;
  c.x_title = "precision";
  c.y_title = "throughput";
  c.y_unit = Unit::flop_per_second;
  std::vector<std::string> precisions;
  for (const GemmRow& row : rows.gemm) {
    if (row.median &&
        std::find(precisions.begin(), precisions.end(), row.precision) == precisions.end()) {
      precisions.push_back(row.precision);
    }
  }
  std::sort(precisions.begin(), precisions.end(), [](const std::string& a, const std::string& x) {
    return precision_rank(a) < precision_rank(x);
  });
  std::map<std::string, Series> references;  // one per datasheet model
  std::vector<std::string> reference_order;
  for (const Entry& entry : entries_of(rows.gemm)) {
    Series measured;
    measured.name = label_entries ? b.entry_label(entry, rows.runs > 1) : "measured";
    measured.categories = precisions;
    std::string model = entry.gpu && entry.gpu->peak ? entry.gpu->peak->model : "";
    Series& reference = references[model];
    bool new_reference = reference.categories.empty();
    if (new_reference) {
      reference.name = model.empty() ? "datasheet" : fmt::format("datasheet ({})", model);
      reference.reference = true;
      reference.categories = precisions;
      reference.y.assign(precisions.size(), kNaN);
      reference_order.push_back(model);
    }
    for (std::size_t i = 0; i < precisions.size(); ++i) {
      auto it = std::find_if(rows.gemm.begin(), rows.gemm.end(), [&](const GemmRow& row) {
        return same_entry(row.entry, entry) && row.precision == precisions[i];
      });
      bool found = it != rows.gemm.end() && it->median;
      measured.y.push_back(found ? *it->median : kNaN);
      auto fraction = found ? it->fraction_of_peak() : std::nullopt;
      measured.labels.push_back(fraction ? fmt::format("{:.0f}%", *fraction * 100) : "");
      if (found && it->peak && std::isnan(reference.y[i])) reference.y[i] = *it->peak;
    }
    c.series.push_back(std::move(measured));
  }
  for (const std::string& model : reference_order) {
    if (!model.empty()) c.series.push_back(std::move(references[model]));
  }
  return c;
}

// Throughput window by window: is the rate steady, or does it sag as the GPU heats up?
std::optional<Chart> window_chart(const ReportBuilder& b, const BurnRows& rows,
                                  bool label_entries) {
  Chart c;
  c.key = "burn_windows";
  c.title = "Throughput window by window";
  c.caption =
      "Each point is one ~1 s window of a precision's timed phase: a steady line is a "
      "GPU that holds its clocks.";
  c.kind = ChartKind::lines;
  c.x_title = "time into the precision's timed phase";
  c.x_unit = Unit::seconds;
  c.y_title = "throughput";
  c.y_unit = Unit::flop_per_second;
  std::map<std::pair<std::string, std::string>, Series> series;  // (entry label, precision)
  std::vector<std::pair<std::string, std::string>> order;
  for (const store::RunData& run : b.runs()) {
    if (!holds(run, DataKind::burn)) continue;
    for (const store::Measurement& m : run.measurements) {
      if (m.name != store::names::kGemmWindowFlopPerS || !m.value) continue;
      Entry entry{&run, ReportBuilder::find_gpu(run, m.gpu.value_or(0)), m.gpu.value_or(0)};
      std::string label = label_entries ? b.entry_label(entry, rows.runs > 1) + " " : "";
      auto key = std::make_pair(label, tag_text(m, "precision"));
      auto [it, added] = series.try_emplace(key);
      if (added) {
        order.push_back(key);
        it->second.name = label + key.second;
        it->second.markers = true;
      }
      it->second.x.push_back(
          tag_number(m, "t_s").value_or(static_cast<double>(it->second.x.size())));
      it->second.y.push_back(*m.value);
    }
  }
  if (order.empty()) return std::nullopt;
  // Entries in the order met, precisions in gpuscope's order within each.
  std::vector<std::string> labels;
  for (const auto& key : order) {
    if (std::find(labels.begin(), labels.end(), key.first) == labels.end()) {
      labels.push_back(key.first);
    }
  }
  auto label_index = [&](const std::string& label) {
    return std::find(labels.begin(), labels.end(), label) - labels.begin();
  };
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& x) {
    return std::make_pair(label_index(a.first), precision_rank(a.second)) <
           std::make_pair(label_index(x.first), precision_rank(x.second));
  });
  for (const auto& key : order) c.series.push_back(std::move(series[key]));
  return c;
}

// Bandwidth against transfer size: where the link's latency stops mattering.
std::optional<Chart> host_link_size_chart(const ReportBuilder& b, bool label_entries, int runs) {
  Chart c;
  c.key = "burn_host_link_sizes";
  c.title = "Host link bandwidth by transfer size";
  c.caption = "Small copies are dominated by latency; the plateau is the link's bandwidth.";
  c.kind = ChartKind::lines;
  c.x_title = "transfer size";
  c.x_unit = Unit::bytes;
  c.x_log = true;
  c.y_title = "bandwidth";
  c.y_unit = Unit::bytes_per_second;
  std::vector<std::string> order;
  std::map<std::string, std::map<double, double>> curves;  // series -> size -> bytes/s
  for (const store::RunData& run : b.runs()) {
    if (!holds(run, DataKind::burn)) continue;
    for (const store::Measurement& m : run.measurements) {
      auto size = tag_number(m, "size_bytes");
      if (m.name != store::names::kHostLinkBytesPerS || !m.value || !size) continue;
      Entry entry{&run, ReportBuilder::find_gpu(run, m.gpu.value_or(0)), m.gpu.value_or(0)};
      std::string name = fmt::format("{} {}", tag_text(m, "direction"), tag_text(m, "memory"));
      if (label_entries) name = b.entry_label(entry, runs > 1) + " " + name;
      if (!curves.count(name)) order.push_back(name);
      curves[name][*size] = *m.value;  // a repeated size: the last measured
    }
  }
  if (order.empty()) return std::nullopt;
  for (const std::string& name : order) {
    Series s;
    s.name = name;
    s.markers = true;
    for (const auto& [size, rate] : curves[name]) {
      s.x.push_back(size);
      s.y.push_back(rate);
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

int host_link_rank(const std::string& what) {
  static const char* kOrder[] = {"h2d pinned",   "d2h pinned",   "bidirectional pinned",
                                 "h2d pageable", "d2h pageable", "bidirectional pageable"};
  for (int i = 0; i < 6; ++i) {
    if (what == kOrder[i]) return i;
  }
  return 6;
}

Table bandwidth_table(const ReportBuilder& b, const std::vector<BandwidthRow>& rows, int runs,
                      bool label_entries, bool memory) {
  Table t;
  t.key = memory ? "burn_memory" : "burn_host_link";
  t.title = memory ? "Device memory bandwidth" : "Host link (host ↔ device copies)";
  t.caption = memory ? "Bytes read plus bytes written per second (a copy counts its buffer twice), "
                       "median of repeated runs; % of peak against the datasheet."
                     : "The largest transfer size measured; pinned memory is what DMA engines "
                       "reach, pageable is what an ordinary buffer gets.";
  if (label_entries) t.columns.push_back({"gpu", "GPU", Unit::none});
  t.columns.push_back({memory ? "kernel" : "transfer", memory ? "kernel" : "transfer", Unit::none});
  t.columns.push_back({"bytes_per_s", "bandwidth", Unit::bytes_per_second});
  if (memory) {
    t.columns.push_back({"peak_bytes_per_s", "datasheet", Unit::bytes_per_second});
    t.columns.push_back({"fraction_of_peak", "% of peak", Unit::ratio});
  }
  t.columns.push_back({"size_bytes", memory ? "buffer" : "size", Unit::bytes});
  t.columns.push_back({"note", "note", Unit::none});
  for (const BandwidthRow& row : rows) {
    std::vector<Value> cells;
    if (label_entries) cells.push_back(b.entry_label(row.entry, runs > 1));
    cells.push_back(row.what);
    cells.push_back(optional_value(row.bytes_per_s));
    if (memory) {
      cells.push_back(optional_value(row.peak));
      std::optional<double> fraction;
      if (row.bytes_per_s && row.peak && *row.peak > 0) fraction = *row.bytes_per_s / *row.peak;
      cells.push_back(optional_value(fraction));
    }
    cells.push_back(optional_value(row.size_bytes));
    cells.push_back(row.skipped.empty() ? std::string() : "skipped: " + row.skipped);
    t.rows.push_back(std::move(cells));
  }
  return t;
}

Chart host_link_chart(const ReportBuilder& b, const std::vector<BandwidthRow>& rows, int runs,
                      bool label_entries) {
  Chart c;
  c.key = "burn_host_link";
  c.title = "Host link bandwidth";
  c.caption = "h2d: host to device, d2h: device to host; bidirectional moves both ways at once.";
  c.kind = ChartKind::bars;
  c.x_title = "transfer";
  c.y_title = "bandwidth";
  c.y_unit = Unit::bytes_per_second;
  std::vector<std::string> categories;
  for (const BandwidthRow& row : rows) {
    if (row.bytes_per_s &&
        std::find(categories.begin(), categories.end(), row.what) == categories.end()) {
      categories.push_back(row.what);
    }
  }
  for (const Entry& entry : entries_of(rows)) {
    Series s;
    s.name = label_entries ? b.entry_label(entry, runs > 1) : "measured";
    s.categories = categories;
    for (const std::string& what : categories) {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const BandwidthRow& row) {
        return same_entry(row.entry, entry) && row.what == what;
      });
      bool found = it != rows.end() && it->bytes_per_s;
      s.y.push_back(found ? *it->bytes_per_s : kNaN);
      s.labels.push_back(found ? format_value(*it->bytes_per_s, Unit::bytes_per_second) : "");
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

// The rows as the burn rules read them (gpuscope/analysis.h): one rule set for the report, the
// study and the burn command.
analysis::GemmSpan gemm_span(const GemmRow& row) {
  analysis::GemmSpan span;
  span.precision = row.precision;
  span.span_s = row.span_s;
  for (const auto& [reason, seconds] : row.throttle) span.throttle_s[reason] += seconds;
  span.temperature_max_c = row.temperature_max_c;
  span.fraction_of_peak = row.fraction_of_peak();
  span.peak_flop_per_s = row.peak;
  span.errors = row.errors;
  span.skipped = row.skipped;
  return span;
}

// Each GPU's findings, about that GPU (its label the first subject) and the precisions listed.
void add_burn_findings(ReportBuilder& b, const BurnRows& rows) {
  for (const Entry& entry : entries_of(rows.gemm)) {
    std::vector<analysis::GemmSpan> spans;
    for (const GemmRow& row : rows.gemm) {
      if (same_entry(row.entry, entry)) spans.push_back(gemm_span(row));
    }
    const std::optional<double> slowdown =
        entry.gpu ? entry.gpu->temperature_slowdown_c : std::nullopt;
    for (Finding f : analysis::burn_findings(spans, entry.gpu_number, slowdown)) {
      f.subjects.insert(f.subjects.begin(), b.subject(entry));
      b.add_finding(std::move(f));
    }
  }
}

void add_headlines_and_findings(ReportBuilder& b, const BurnRows& rows, bool label_entries) {
  add_burn_findings(b, rows);
  const GemmRow* fastest = nullptr;
  const GemmRow* best_fraction = nullptr;
  double errors = 0, low = 1e300, high = 0;
  int with_fraction = 0;
  for (const GemmRow& row : rows.gemm) {
    if (row.median && (!fastest || *row.median > *fastest->median)) fastest = &row;
    if (auto f = row.fraction_of_peak()) {
      if (!best_fraction || *f > *best_fraction->fraction_of_peak()) best_fraction = &row;
      low = std::min(low, *f);
      high = std::max(high, *f);
      ++with_fraction;
    }
    if (row.errors) errors += *row.errors;
  }
  if (fastest) {
    std::string where = label_entries ? " on " + b.entry_label(fastest->entry, rows.runs > 1) : "";
    auto f = fastest->fraction_of_peak();
    // int8 counts integer operations: OP/s, not FLOP/s.
    const Unit unit =
        rate_unit(fastest->precision) == "OP/s" ? Unit::op_per_second : Unit::flop_per_second;
    b.add_headline(
        {"Fastest matrix rate", *fastest->median, unit,
         fmt::format("{}{}{}", fastest->precision, where,
                     f ? fmt::format(", {} of the datasheet's {}", format_value(*f, Unit::ratio),
                                     format_value(*fastest->peak, unit))
                       : ""),
         Tone::neutral});
  }
  if (best_fraction) {
    double f = *best_fraction->fraction_of_peak();
    b.add_headline({"Best % of datasheet peak", f, Unit::ratio,
                    with_fraction > 1
                        ? fmt::format("{}; {} to {} over {} precisions", best_fraction->precision,
                                      format_value(low, Unit::ratio),
                                      format_value(high, Unit::ratio), with_fraction)
                        : best_fraction->precision,
                    f >= 0.7   ? Tone::good
                    : f >= 0.5 ? Tone::neutral
                               : Tone::warning});
  }
  if (!rows.gemm.empty()) {
    bool any_counted = std::any_of(rows.gemm.begin(), rows.gemm.end(),
                                   [](const GemmRow& r) { return r.errors.has_value(); });
    if (any_counted) {
      b.add_headline({"Wrong GEMM results", errors, Unit::count,
                      errors == 0 ? "every result matched its repeat and the fp64 reference"
                                  : "a healthy GPU repeats itself exactly: see Findings",
                      errors == 0 ? Tone::good : Tone::bad});
    }
  }
  auto copy = std::find_if(rows.memory.begin(), rows.memory.end(),
                           [](const BandwidthRow& r) { return r.what == "copy" && r.bytes_per_s; });
  if (copy != rows.memory.end()) {
    std::string detail = "device copy, read + written";
    if (copy->peak) {
      detail = fmt::format("device copy: {} of the datasheet's {}",
                           format_value(*copy->bytes_per_s / *copy->peak, Unit::ratio),
                           format_value(*copy->peak, Unit::bytes_per_second));
    }
    b.add_headline(
        {"Memory bandwidth", *copy->bytes_per_s, Unit::bytes_per_second, detail, Tone::neutral});
  }
  auto h2d = std::find_if(rows.host_link.begin(), rows.host_link.end(), [](const BandwidthRow& r) {
    return r.what == "h2d pinned" && r.bytes_per_s;
  });
  if (h2d != rows.host_link.end()) {
    auto d2h =
        std::find_if(rows.host_link.begin(), rows.host_link.end(), [&](const BandwidthRow& r) {
          return r.what == "d2h pinned" && r.bytes_per_s && same_entry(r.entry, h2d->entry);
        });
    const store::GpuRecord* gpu = h2d->entry.gpu;
    std::string link =
        gpu && gpu->pcie_generation_max && gpu->pcie_width_max
            ? fmt::format(" over PCIe Gen{} x{}", *gpu->pcie_generation_max, *gpu->pcie_width_max)
            : "";
    b.add_headline({"Host → device (pinned)", *h2d->bytes_per_s, Unit::bytes_per_second,
                    d2h != rows.host_link.end()
                        ? fmt::format("device → host {}{}",
                                      format_value(*d2h->bytes_per_s, Unit::bytes_per_second), link)
                        : link,
                    Tone::neutral});
  }
}

}  // namespace

void add_burn_section(ReportBuilder& b) {
  BurnRows rows = collect_burn_rows(b);
  if (rows.gemm.empty() && rows.memory.empty() && rows.host_link.empty()) return;
  bool label_entries = entries_of(rows.gemm).size() > 1 || entries_of(rows.memory).size() > 1 ||
                       entries_of(rows.host_link).size() > 1 || rows.runs > 1;
  add_headlines_and_findings(b, rows, label_entries);

  Section s;
  s.key = "burn";
  s.title = "Compute, memory and host link (burn)";
  s.intro =
      "Does the GPU deliver its datasheet compute, memory and host-link bandwidth, with "
      "every result correct and without throttling?";
  if (!rows.gemm.empty()) {
    s.blocks.push_back(gemm_chart(b, rows, label_entries));
    if (auto windows = window_chart(b, rows, label_entries)) s.blocks.push_back(*windows);
    s.blocks.push_back(gemm_table(b, rows, label_entries));
  }
  if (!rows.host_link.empty()) {
    std::stable_sort(rows.host_link.begin(), rows.host_link.end(),
                     [](const BandwidthRow& a, const BandwidthRow& x) {
                       return host_link_rank(a.what) < host_link_rank(x.what);
                     });
    s.blocks.push_back(host_link_chart(b, rows.host_link, rows.runs, label_entries));
    if (auto sizes = host_link_size_chart(b, label_entries, rows.runs)) {
      s.blocks.push_back(std::move(*sizes));
    }
  }
  if (!rows.memory.empty()) {
    s.blocks.push_back(bandwidth_table(b, rows.memory, rows.runs, label_entries, true));
  }
  if (!rows.host_link.empty()) {
    s.blocks.push_back(bandwidth_table(b, rows.host_link, rows.runs, label_entries, false));
  }
  if (!rows.overlap.empty()) {
    Table t;
    t.key = "burn_overlap";
    t.title = "Copy/compute overlap";
    t.caption = "1 = a copy fully hidden behind a kernel; 0 = the two ran one after the other.";
    if (label_entries) t.columns.push_back({"gpu", "GPU", Unit::none});
    t.columns.push_back({"memory", "host memory", Unit::none});
    t.columns.push_back({"efficiency", "overlap", Unit::ratio});
    for (const BandwidthRow& row : rows.overlap) {
      std::vector<Value> cells;
      if (label_entries) cells.push_back(b.entry_label(row.entry, rows.runs > 1));
      cells.push_back(row.what);
      cells.push_back(optional_value(row.bytes_per_s));
      t.rows.push_back(std::move(cells));
    }
    s.blocks.push_back(std::move(t));
  }
  b.add_section(std::move(s));
}

}  // namespace gpuscope::report::detail
