// `gpuscope report`: runs from results stores and result files, turned into one Document that
// any reporter writes (gpuscope/reporter.h) — above all one self-contained HTML page.
//
// The page gives the answer first (fastest precision and mode, % of the datasheet reached,
// problems found), then a section per kind of data present: matrix throughput against the
// datasheet, memory and host-link bandwidth, comparisons when several GPUs or runs are given,
// telemetry timelines with throttled spans shaded, bench bars and convergence curves, power-limit
// sweeps with their 80/90/95% knees, the systems and runs reported on. Sections without data are
// left out.
//
// Numbers in tables are computed from every point; long series are downsampled for drawing
// only (min and max of every interval kept).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/reporter.h"
#include "gpuscope/status.h"
#include "gpuscope/store.h"

namespace gpuscope::report {

// Loads the runs to report on. Each path is a results store (SQLite) or a result file that
// store::read_result_file reads (records JSON, `info --json`, burn worker JSON lines).
// `run_ids` selects runs of the stores by id (every store given is searched); empty: all runs.
// Runs of result files are always included. Fails with the first store or file that cannot be
// read (io_error, data_error, not_found), or not_found when a selected id is in no store.
Result<std::vector<store::RunData>> load_runs(const std::vector<std::string>& paths,
                                              const std::vector<store::RunId>& run_ids);

struct ReportOptions {
  std::string title = "gpuscope report";
  std::string command_line;  // shown in the report's context
  // Points per series drawn in a chart (numbers always use every point).
  std::size_t max_points_per_series = 1500;
  // ISO 8601 time written as "generated"; empty: now. (Tests pin it.)
  std::string generated_utc;
};

// Never fails: missing data leaves its section out; an empty input gives a document that says
// there was nothing to report.
Document build_report(const std::vector<store::RunData>& runs, const ReportOptions& options);

}  // namespace gpuscope::report
