// bench's measurements of every run (not sweeps: rows tagged with a power limit belong to the
// sweep section), gathered per GPU, model, task and mode.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/report_model.h"

namespace gpuscope::report::detail {

struct BenchRow {
  Entry entry;
  std::string model, task, mode;
  std::optional<double> batch_size;
  std::optional<double> samples_per_s, peak_memory_bytes, energy_per_sample_j;
  std::string skipped;
  // What tells this row from others of the same mode ("cudnn_benchmark=off", "input=host
  // workers=8 ..."; tag "variant"), and the convergence guard's verdict (tag "guard"); both
  // empty when the run did not say.
  std::string variant, guard;
  // "mode" or "mode [variant]": how the row is named in charts and tables.
  std::string mode_label() const { return variant.empty() ? mode : mode + " [" + variant + "]"; }
  // "vit_b16 train amp_bf16": what comparisons match across GPUs and runs.
  std::string key() const { return model + " " + task + " " + mode_label(); }
};

struct LossCurve {
  Entry entry;
  std::string model, task, mode;
  std::vector<double> steps, losses;  // by step
};

struct BenchRows {
  std::vector<BenchRow> rows;  // by run, GPU, model, task, then the order the modes came in
  std::vector<LossCurve> curves;
  int runs = 0;
};

BenchRows collect_bench_rows(const ReportBuilder& builder);

}  // namespace gpuscope::report::detail
