// The bench section: which precision/mode to train and serve with, and what each costs in
// memory and energy; convergence curves show whether a faster mode still learns.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "report/report_bench_rows.h"

namespace gpuscope::report::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool same_group(const BenchRow& a, const BenchRow& b) {
  return a.entry.run == b.entry.run && a.entry.gpu_number == b.entry.gpu_number &&
         a.model == b.model && a.task == b.task;
}

// The row a mode is compared with: fp32 of the same GPU, model, task and variant, else fp32 of
// any variant, else the group's first.
const BenchRow* baseline(const std::vector<BenchRow>& rows, const BenchRow& row) {
  const BenchRow* first = nullptr;
  const BenchRow* fp32 = nullptr;
  for (const BenchRow& r : rows) {
    if (!same_group(r, row) || !r.samples_per_s) continue;
    if (r.mode == "fp32" && r.variant == row.variant) return &r;
    if (r.mode == "fp32" && !fp32) fp32 = &r;
    if (!first) first = &r;
  }
  return fp32 ? fp32 : first;
}

// A verdict of the convergence guard that makes a mode unusable ("diverged", "nan", ...).
bool bad_guard(const BenchRow& row) {
  return !row.guard.empty() && row.guard != "ok" && row.guard != "unknown";
}

struct Labels {
  bool entries = false, models = false;
};

std::string series_name(const ReportBuilder& b, const BenchRow& row, const Labels& labels,
                        int runs) {
  std::string name = row.task;
  if (labels.models) name = row.model + " " + name;
  if (labels.entries) name = b.entry_label(row.entry, runs > 1) + " " + name;
  return name;
}

Chart mode_chart(const ReportBuilder& b, const BenchRows& bench, const Labels& labels,
                 const char* key, const char* title, Unit unit,
                 std::optional<double> BenchRow::*field) {
  Chart c;
  c.key = key;
  c.title = title;
  c.kind = ChartKind::bars;
  c.x_title = "mode";
  c.y_title = title;
  c.y_unit = unit;
  std::vector<std::string> modes, names;
  for (const BenchRow& row : bench.rows) {
    // A mode without this number (skipped) would only leave a gap.
    bool measured = (row.*field).has_value();
    if (measured && std::find(modes.begin(), modes.end(), row.mode_label()) == modes.end()) {
      modes.push_back(row.mode_label());
    }
    std::string name = series_name(b, row, labels, bench.runs);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  for (const std::string& name : names) {
    Series s;
    s.name = name;
    s.categories = modes;
    for (const std::string& mode : modes) {
      auto it = std::find_if(bench.rows.begin(), bench.rows.end(), [&](const BenchRow& row) {
        return row.mode_label() == mode && series_name(b, row, labels, bench.runs) == name;
      });
      bool found = it != bench.rows.end() && (*it.*field).has_value();
      s.y.push_back(found ? *(*it.*field) : kNaN);
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

// The fastest mode of one model: samples/s of different models do not compare (a smaller model
// wins by being smaller), so each model has its own answer.
void add_best_mode(ReportBuilder& b, const BenchRows& bench, const std::string& model,
                   const std::string& task, const Labels& labels) {
  const BenchRow* best = nullptr;
  for (const BenchRow& row : bench.rows) {
    if (row.model == model && row.task == task && row.samples_per_s && !bad_guard(row) &&
        (!best || *row.samples_per_s > *best->samples_per_s)) {
      best = &row;
    }
  }
  if (!best) return;
  std::vector<std::string> parts = {best->mode_label()};
  if (const BenchRow* base = baseline(bench.rows, *best); base && base != best) {
    parts.push_back(fmt::format(
        "{} vs {}", format_value(*best->samples_per_s / *base->samples_per_s, Unit::factor),
        base->mode));
  }
  if (best->peak_memory_bytes) {
    parts.push_back("peak memory " + format_value(*best->peak_memory_bytes, Unit::bytes));
  }
  if (best->energy_per_sample_j) {
    parts.push_back(format_value(*best->energy_per_sample_j, Unit::joules) + " per sample");
  }
  if (labels.entries) parts.push_back("on " + b.entry_label(best->entry, bench.runs > 1));
  std::string detail;
  for (const std::string& p : parts) detail += (detail.empty() ? "" : ", ") + p;
  std::string label = fmt::format("Fastest {} mode", task == "infer" ? "inference" : task);
  if (labels.models) label += " (" + model + ")";
  b.add_headline(
      {std::move(label), *best->samples_per_s, Unit::samples_per_second, detail, Tone::good});
}

}  // namespace

void add_bench_section(ReportBuilder& b) {
  BenchRows bench = collect_bench_rows(b);
  if (bench.rows.empty() && bench.curves.empty()) return;
  Labels labels;
  std::set<std::pair<const store::RunData*, int>> entries;
  std::set<std::string> models;
  for (const BenchRow& row : bench.rows) {
    entries.insert({row.entry.run, row.entry.gpu_number});
    models.insert(row.model);
  }
  labels.entries = entries.size() > 1;
  labels.models = models.size() > 1;
  std::vector<std::string> model_order;  // as the rows came
  for (const BenchRow& row : bench.rows) {
    if (std::find(model_order.begin(), model_order.end(), row.model) == model_order.end()) {
      model_order.push_back(row.model);
    }
  }
  for (const char* task : {"train", "infer"}) {
    for (const std::string& model : model_order) add_best_mode(b, bench, model, task, labels);
  }

  Section s;
  s.key = "bench";
  s.title = "Training and inference modes (bench)";
  s.intro =
      "Which precision and mode to train and serve with, and what each costs in memory "
      "and energy per sample.";
  if (!bench.rows.empty()) {
    s.blocks.push_back(mode_chart(b, bench, labels, "bench_throughput", "throughput",
                                  Unit::samples_per_second, &BenchRow::samples_per_s));
    s.blocks.push_back(mode_chart(b, bench, labels, "bench_memory", "peak memory", Unit::bytes,
                                  &BenchRow::peak_memory_bytes));
    s.blocks.push_back(mode_chart(b, bench, labels, "bench_energy", "energy per sample",
                                  Unit::joules, &BenchRow::energy_per_sample_j));
  }
  if (!bench.curves.empty()) {
    Chart c;
    c.key = "bench_convergence";
    c.title = "Convergence";
    c.caption = "Training loss by step: a mode that is faster per step must still learn.";
    c.kind = ChartKind::lines;
    c.x_title = "step";
    c.y_title = "loss";
    for (const LossCurve& curve : bench.curves) {
      Series series;
      series.name =
          curve.mode + (curve.task == "train" || curve.task.empty() ? "" : " " + curve.task);
      if (labels.models) series.name = curve.model + " " + series.name;
      if (labels.entries)
        series.name = b.entry_label(curve.entry, bench.runs > 1) + " " + series.name;
      series.x = curve.steps;
      series.y = curve.losses;
      c.series.push_back(std::move(series));
    }
    s.blocks.push_back(std::move(c));
  }
  if (!bench.rows.empty()) {
    Table t;
    t.key = "bench_modes";
    t.title = "Modes";
    t.caption =
        "Throughput in samples per second at steady state; × is against fp32 of the same "
        "model and task (else the first mode measured); peak memory as the allocator "
        "saw it; energy from the GPU's energy counter over the timed steps.";
    if (labels.entries) t.columns.push_back({"gpu", "GPU", Unit::none});
    t.columns.insert(t.columns.end(), {{"model", "model", Unit::none},
                                       {"task", "task", Unit::none},
                                       {"mode", "mode", Unit::none},
                                       {"batch_size", "batch", Unit::count},
                                       {"samples_per_s", "throughput", Unit::samples_per_second},
                                       {"speedup", "×", Unit::factor},
                                       {"peak_memory_bytes", "peak memory", Unit::bytes},
                                       {"energy_per_sample_j", "energy/sample", Unit::joules},
                                       {"note", "note", Unit::none}});
    for (const BenchRow& row : bench.rows) {
      std::vector<Value> cells;
      if (labels.entries) cells.push_back(b.entry_label(row.entry, bench.runs > 1));
      cells.push_back(row.model);
      cells.push_back(row.task);
      cells.push_back(row.mode_label());
      cells.push_back(optional_value(row.batch_size));
      cells.push_back(optional_value(row.samples_per_s));
      const BenchRow* base = baseline(bench.rows, row);
      std::optional<double> speedup;
      if (base && row.samples_per_s) speedup = *row.samples_per_s / *base->samples_per_s;
      cells.push_back(optional_value(speedup));
      cells.push_back(optional_value(row.peak_memory_bytes));
      cells.push_back(optional_value(row.energy_per_sample_j));
      std::string note = row.skipped.empty() ? std::string() : "skipped: " + row.skipped;
      // bench writes the guard's finding with the run; the table says it again per row.
      if (bad_guard(row)) note = "does not converge (guard: " + row.guard + ")";
      cells.push_back(note);
      t.rows.push_back(std::move(cells));
      if (!row.skipped.empty()) {
        b.add_finding({.id = "not_measured",
                       .severity = Severity::info,
                       .title = fmt::format("{} {} {} was not measured: {}", row.model, row.task,
                                            row.mode_label(), row.skipped),
                       .subjects = {b.subject(row.entry)},
                       .gpu = row.entry.gpu_number});
      }
    }
    s.blocks.push_back(std::move(t));
  }
  b.add_section(std::move(s));
}

}  // namespace gpuscope::report::detail
