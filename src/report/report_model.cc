#include "report/report_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>

#include "gpuscope/precision.h"

namespace gpuscope::report::detail {
namespace {

// Gives peak rates to GPUs whose run did not record them: from another run's record of the same
// GPU (an `info` recording names its datasheet entry), else from the datasheet table.
void share_peaks(std::vector<store::RunData>& runs) {
  std::map<std::string, store::PeakRecord> by_uuid;
  for (const store::RunData& run : runs) {
    for (const store::GpuRecord& g : run.run.gpus) {
      if (g.peak && !g.uuid.empty()) by_uuid.emplace(g.uuid, *g.peak);
    }
  }
  for (store::RunData& run : runs) {
    for (store::GpuRecord& g : run.run.gpus) {
      if (g.peak) continue;
      if (auto it = by_uuid.find(g.uuid); it != by_uuid.end() && !g.uuid.empty()) {
        g.peak = it->second;
      } else {
        g.peak = store::datasheet_peak(g);
      }
    }
  }
}

}  // namespace

ReportBuilder::ReportBuilder(const std::vector<store::RunData>& runs, const ReportOptions& options)
    : runs_(runs), options_(options) {
  share_peaks(runs_);
}

const store::GpuRecord* ReportBuilder::find_gpu(const store::RunData& run, int gpu) {
  for (const store::GpuRecord& g : run.run.gpus) {
    if (g.gpu == gpu) return &g;
  }
  return nullptr;
}

std::string ReportBuilder::run_label(const store::RunData& run) {
  // Runs read from files have no store id: their kind names them instead. A label (a person's,
  // or "study quick" for every quick study) does not tell two runs apart: where and when it ran,
  // and the file it came from, always follow.
  std::string name = run.run.label    ? *run.run.label
                     : run.run.id > 0 ? fmt::format("run {}", run.run.id)
                                      : run.run.kind;
  std::string which = run.run.host.empty() ? "" : run.run.host + ", ";
  which += format_time(run.run.started_unix_s);
  // A run read from a file (no store id) names the file, unless its label is the file's name.
  const std::filesystem::path file(run.source);
  if (run.run.id == 0 && !run.source.empty() && file.stem().string() != name) {
    which += ", " + file.filename().string();
  }
  return fmt::format("{} ({})", name, which);
}

std::string ReportBuilder::entry_label(const Entry& entry, bool with_run) const {
  std::string label =
      entry.gpu ? fmt::format("{} · GPU {}", short_gpu_name(entry.gpu->name), entry.gpu_number)
                : fmt::format("GPU {}", entry.gpu_number);
  if (with_run && entry.run) label += " · " + run_label(*entry.run);
  return label;
}

namespace {

bool empty_cell(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return true;
  const std::string* text = std::get_if<std::string>(&v);
  return text && text->empty();
}

void drop_empty_columns(Table& t) {
  for (std::size_t c = t.columns.size(); c-- > 1;) {  // the first column names the rows
    bool empty = std::all_of(t.rows.begin(), t.rows.end(), [&](const std::vector<Value>& row) {
      return c >= row.size() || empty_cell(row[c]);
    });
    if (!empty || t.rows.empty()) continue;
    t.columns.erase(t.columns.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : t.rows) {
      if (c < row.size()) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    }
  }
}

}  // namespace

bool holds(const store::RunData& run, DataKind kind) {
  const std::string& k = run.run.kind;
  switch (kind) {
    case DataKind::burn:
      return k == "burn";
    case DataKind::bench:
      return k == "bench";
    case DataKind::sweep:
      return k == "sweep" || k == "bench" || k == "burn";
  }
  return false;
}

void ReportBuilder::add_section(Section section) {
  for (Block& block : section.blocks) {
    if (auto* table = std::get_if<Table>(&block)) drop_empty_columns(*table);
  }
  sections_.push_back(std::move(section));
}

Document ReportBuilder::finish(ReportContext context) {
  // Findings the commands stored, then those the sections derived; the worst first.
  std::vector<Finding> all;
  for (const store::RunData& run : runs_) {
    for (Finding f : run.findings) {
      Entry entry{&run, f.gpu ? find_gpu(run, *f.gpu) : nullptr, f.gpu.value_or(0)};
      f.subjects.insert(f.subjects.begin(),
                        f.gpu ? entry_label(entry, runs_.size() > 1) : run_label(run));
      all.push_back(std::move(f));
    }
  }
  all.insert(all.end(), findings_.begin(), findings_.end());
  all = analysis::merge_same(std::move(all));
  analysis::rank(all);

  int errors = 0, warnings = 0;
  for (const Finding& f : all) {
    errors += f.severity == Severity::error;
    warnings += f.severity == Severity::warning;
  }
  Headline problems;
  problems.label = "Problems found";
  if (errors + warnings == 0) {
    problems.value = std::string("none");
    problems.detail =
        runs_.empty() ? "nothing was reported on" : "no errors or warnings in the runs reported on";
    problems.tone = Tone::good;
  } else {
    problems.value = static_cast<double>(errors + warnings);
    problems.unit = Unit::count;
    problems.detail = fmt::format("{} error{}, {} warning{}: see Findings", errors,
                                  errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
    problems.tone = errors > 0 ? Tone::bad : Tone::warning;
  }
  summary_.push_back(std::move(problems));

  Document doc;
  doc.context = std::move(context);
  doc.summary = std::move(summary_);
  doc.findings = std::move(all);
  doc.sections = std::move(sections_);
  return doc;
}

std::string tag_text(const store::Measurement& m, const char* key) {
  if (!m.tags.is_object()) return {};
  auto it = m.tags.find(key);
  if (it == m.tags.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  if (it->is_number()) return fmt::format("{}", it->get<double>());
  return {};
}

std::optional<double> tag_number(const store::Measurement& m, const char* key) {
  if (!m.tags.is_object()) return std::nullopt;
  auto it = m.tags.find(key);
  if (it == m.tags.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string short_gpu_name(std::string_view name) {
  constexpr std::string_view kVendor = "NVIDIA ";
  if (name.substr(0, kVendor.size()) == kVendor) name.remove_prefix(kVendor.size());
  return std::string(name);
}

std::string format_time(double unix_s) {
  if (!(unix_s > 0)) return "time unknown";
  auto seconds = static_cast<std::time_t>(unix_s);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &utc);
  return text;
}

int precision_rank(std::string_view precision) {
  auto parsed = parse_precision(precision);
  if (!parsed) return 1000;
  for (std::size_t i = 0; i < kAllPrecisions.size(); ++i) {
    if (kAllPrecisions[i] == *parsed) return static_cast<int>(i);
  }
  return 1000;
}

}  // namespace gpuscope::report::detail
