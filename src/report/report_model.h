// What the report's sections share: the runs being reported on, how a GPU of a run is named,
// reading measurement tags, and the summary and findings the sections add to.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/report.h"
#include "gpuscope/reporter.h"
#include "gpuscope/store.h"

namespace gpuscope::report::detail {

// One GPU of one run: what comparisons compare.
struct Entry {
  const store::RunData* run = nullptr;
  const store::GpuRecord* gpu = nullptr;  // nullptr when the run did not describe that GPU
  int gpu_number = 0;
};

// The same GPU of the same run.
inline bool same_entry(const Entry& a, const Entry& b) {
  return a.run == b.run && a.gpu_number == b.gpu_number;
}

// A table cell of a reading that may be missing ("n/a").
inline Value optional_value(const std::optional<double>& v) {
  if (!v) return std::monostate{};
  return *v;
}

class ReportBuilder {
 public:
  ReportBuilder(const std::vector<store::RunData>& runs, const ReportOptions& options);

  const std::vector<store::RunData>& runs() const { return runs_; }
  const ReportOptions& options() const { return options_; }

  // The GPU record of a run, or nullptr.
  static const store::GpuRecord* find_gpu(const store::RunData& run, int gpu);
  // "H100 80GB HBM3 · GPU 0"; with_run adds the run ("… · run 3" or its label).
  std::string entry_label(const Entry& entry, bool with_run) const;
  // What a finding is about: the entry, naming its run when the report has several.
  std::string subject(const Entry& entry) const { return entry_label(entry, runs_.size() > 1); }
  // "run 3 (h100-node, 2026-11-22 10:15 UTC)", or the run's label.
  static std::string run_label(const store::RunData& run);

  void add_headline(Headline headline) { summary_.push_back(std::move(headline)); }
  void add_finding(Finding finding) { findings_.push_back(std::move(finding)); }
  // Tables lose the columns that no row has a value in (a recording without telemetry).
  void add_section(Section section);
  Document finish(ReportContext context);

 private:
  std::vector<store::RunData> runs_;  // copies, with peak rates filled in across runs
  ReportOptions options_;
  std::vector<Headline> summary_;
  std::vector<Finding> findings_;
  std::vector<Section> sections_;
};

// The kinds of measurements the sections read. Each is read from the runs that make it only, so
// that a section appears only for data of its kind: a monitor's memory peak is no bench row, and
// a bench's average power no burn row, though they share a measurement name.
enum class DataKind {
  burn,   // matrix rates, memory and host-link bandwidth: burn runs
  bench,  // samples/s, memory, energy per sample, loss curves: bench runs
  sweep,  // points tagged with a power limit: sweep runs, and bench or burn runs that swept
};
// Whether `run` can hold measurements of `kind` (by its run kind).
bool holds(const store::RunData& run, DataKind kind);

// Tags of a measurement.
std::string tag_text(const store::Measurement& m, const char* key);
std::optional<double> tag_number(const store::Measurement& m, const char* key);

// "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3".
std::string short_gpu_name(std::string_view name);
// "2026-11-22 10:15 UTC"; "time unknown" for 0.
std::string format_time(double unix_s);
// Position of a precision name in gpuscope's order (fp64 ... int8); unknown names last.
int precision_rank(std::string_view precision);

// The sections, each added only when its data is present.
void add_burn_section(ReportBuilder& builder);
void add_comparison_section(ReportBuilder& builder);
void add_telemetry_section(ReportBuilder& builder);
void add_bench_section(ReportBuilder& builder);
// bench --share's trials (report_share.cc): measurements tagged share_mode.
void add_share_section(ReportBuilder& builder);
void add_sweep_section(ReportBuilder& builder);
void add_trace_section(ReportBuilder& builder);
void add_systems_section(ReportBuilder& builder);
void add_other_measurements_section(ReportBuilder& builder);
void add_runs_section(ReportBuilder& builder);

}  // namespace gpuscope::report::detail
