// `gpuscope diagnose`: what holds a training job back, the fix, and what it should gain.
//
// A diagnosis reads a trace folder (what `gpuscope trace` wrote: one record file per process,
// telemetry.jsonl, summary.json), turns each GPU-using process's trace window into per-step
// numbers, and runs the rules of src/analysis/diagnose_rules.h over them: input-bound, pageable
// copies, a synchronization every step, launch-bound, no tensor cores, small batch, cuDNN
// defaults, an unfused optimizer, throttling, a shared GPU, idle GPUs. Each conclusion is an
// analysis::Finding with evidence from this run, a fix, an expected speed-up range from a
// written-down gain model (docs/diagnose.md) and a confidence; the findings of several processes
// (ranks) merge where they agree, and are ranked by expected gain. A job with no major finding
// gets a "healthy" finding saying what could still be tried.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpuscope/analysis.h"
#include "gpuscope/precision.h"
#include "gpuscope/reporter.h"
#include "gpuscope/status.h"
#include "gpuscope/store.h"

namespace gpuscope::analysis {

// The JSON document's "kind" and version ("gpuscope.diagnose"); pinned by a test.
inline constexpr int kDiagnoseSchemaVersion = 1;

struct DiagnoseOptions {
  std::optional<std::string> step_range;  // a user's NVTX range that spans one step
  // Measured dense rates (FLOP/s) by precision, e.g. from a `gpuscope burn --json` result; the
  // datasheet's for the traced GPU otherwise.
  std::map<Precision, double> measured_rates;
};

// One step of a process, for the charts: where its time went.
struct StepBreakdown {
  double wall_s = 0;
  double gpu_busy_s = 0;
  double data_wait_s = 0;  // the GPU idle while the program waited for data
  double sync_s = 0;       // the host blocked on the GPU
};

// A few steps of one process on one time axis (seconds from the first step's start).
struct TimelineSlice {
  struct Interval {
    double start_s = 0, end_s = 0;
  };
  std::vector<Interval> gpu_busy, data_wait, sync;
  std::vector<double> step_starts_s;
};

// What one GPU-using process (the program, or one rank) showed.
struct ProcessDiagnosis {
  std::string subject;  // "pid 1234 (GPU 0)"
  long long pid = 0;
  std::optional<int> gpu;
  std::string gpu_name;     // NVML's, when the telemetry has it
  std::string step_source;  // "marks", "range", "kernel_period", "none"
  std::size_t steps = 0;
  double step_s = 0;         // without tracing's cost where marks tell it
  double traced_step_s = 0;  // inside the window
  double gpu_busy_share = 0;
  std::vector<StepBreakdown> per_step;
  std::vector<std::pair<std::string, double>> idle;  // seconds by gap length, over the window
  TimelineSlice timeline;
  std::vector<Finding> findings;  // this process's, ranked
};

struct Diagnosis {
  std::filesystem::path dir;
  std::vector<std::string> command;
  std::vector<ProcessDiagnosis> processes;
  std::vector<Finding> findings;   // the job's: merged over processes, ranked; never empty
  std::vector<std::string> notes;  // what a reader must know (tracing's cost, CUPTI taken, ...)
  std::string rates_source;        // where the tensor-core model's rates came from
};

// Analyses a recorded trace folder. Fails: not_found (no such folder), invalid_argument (a
// folder that holds no trace: no record file and no summary.json), data_error (a damaged record
// file, named), not_found ("no GPU work seen": the trace holds no kernel). A summary.json of
// the wrong shape is ignored with a note; a damaged line in a record file is skipped and noted.
Result<Diagnosis> diagnose_dir(const std::filesystem::path& dir, const DiagnoseOptions& options);

// The JSON document: {"kind": "gpuscope.diagnose", "schema_version", "dir", "command",
// "findings": [analysis::to_json ...], "processes": [{"subject", "pid", "gpu", "steps",
// "step_s", "traced_step_s", "gpu_busy_share", "per_step", "idle", "findings"}], "notes",
// "rates_source"}.
nlohmann::json diagnosis_to_json(const Diagnosis& diagnosis);

// The console report: the top finding first, in plain words, with its evidence, fix and gain;
// then the others, shorter.
void print_diagnosis(const Diagnosis& diagnosis, std::ostream& out);

// The report document (HTML and the other reporters): the findings first, then the evidence
// charts per process (per-step breakdown, idle time by gap length, a few steps of timeline).
report::Document diagnosis_document(const Diagnosis& diagnosis);

// The diagnosis as a store run of kind "diagnose": per process its step time and GPU busy share
// (measurements "step_time_s", "gpu_busy_share", tagged with "subject"), each finding's
// expected speed-up ("expected_speedup_low"/"_high", tagged with "finding"), and the findings.
store::RunData diagnosis_run_data(const Diagnosis& diagnosis, double started_unix_s,
                                  double ended_unix_s, const std::string& command_line);

// Rates by precision from a `gpuscope burn --json` document (the median of each precision's
// best GEMM rate); empty when it holds none.
std::map<Precision, double> rates_from_burn_json(const nlohmann::json& burn);

}  // namespace gpuscope::analysis
