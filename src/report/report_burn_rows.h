// burn's measurements of every run, gathered per GPU and precision (or per memory kernel, host
// link direction): what the burn and comparison sections draw from.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/report_model.h"

namespace gpuscope::report::detail {

struct GemmRow {
  Entry entry;
  std::string precision;
  std::optional<double> median, min, max;  // FLOP/s over windows
  std::optional<double> windows;
  std::optional<double> span_s;  // the timed span (from the first window to the last)
  std::optional<double> peak;    // the datasheet's FLOP/s for this precision
  std::optional<double> errors;
  std::optional<double> temperature_max_c, power_avg_w, energy_j, flop_per_j;
  std::optional<double> temperature_start_c;  // when its timed span began (absent: older runs)
  std::vector<std::pair<std::string, double>> throttle;  // reason, seconds (non-zero only)
  bool throttle_measured = false;  // false: no throttle time was recorded at all (not "none")
  std::string skipped;             // why, when it did not run
  std::optional<double> fraction_of_peak() const {
    if (!median || !peak || !(*peak > 0)) return std::nullopt;
    return *median / *peak;
  }
};

struct BandwidthRow {
  Entry entry;
  std::string what;  // "copy" (memory kernel), "h2d pinned" (host link)
  std::optional<double> bytes_per_s;
  std::optional<double> size_bytes;  // buffer or transfer size
  std::optional<double> peak;        // datasheet memory bandwidth (memory kernels only)
  std::string skipped;
};

struct BurnRows {
  std::vector<GemmRow> gemm;  // by run, GPU, then precision in gpuscope's order
  std::vector<BandwidthRow> memory;
  std::vector<BandwidthRow> host_link;  // the largest transfer size of each direction/memory
  std::vector<BandwidthRow> overlap;    // bytes_per_s holds the efficiency (a ratio)
  // Number of distinct runs the rows come from: labels name the run when more than one.
  int runs = 0;
};

BurnRows collect_burn_rows(const ReportBuilder& builder);

}  // namespace gpuscope::report::detail
