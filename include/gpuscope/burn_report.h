// How `gpuscope burn` is shown: console tables and versioned JSON for the results, and a
// progress display for stderr while the workers run.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "gpuscope/burn.h"
#include "gpuscope/status.h"

namespace gpuscope {

// Bumped whenever a field is renamed, removed or changes meaning (adding fields does not).
inline constexpr int kBurnSchemaVersion = 1;

// {"schema_version": 1, "kind": "gpuscope.burn", "ok", "interrupted", "exit_code", "host",
// "options", "targets": [...]}. Units are SI and named in the key (_seconds, _bytes, _w, _j,
// _c, _hz, _flop_per_s, _bytes_per_s); fractions are 0..1. Absent readings are omitted.
nlohmann::json burn_to_json(const burn::Report& report);

// {"schema_version": 1, "kind": "gpuscope.burn", "error": {"code", "message"}}.
nlohmann::json burn_error_json(const Status& status);

// One table per GPU or MIG instance (precision | TFLOP/s | % of peak | errors | max °C |
// throttled | avg W | TFLOP/J), then its memory-bandwidth and host-link tables, then a verdict.
void print_burn(const burn::Report& report, std::ostream& out);

// Progress on a stream (stderr): on a terminal one line, rewritten in place and cut to
// `columns` (0: not cut); otherwise a line when a phase changes or every `period_seconds`.
class BurnProgressPrinter {
 public:
  BurnProgressPrinter(std::ostream& out, bool terminal, int columns = 0,
                      double period_seconds = 30);
  void update(const burn::Progress& progress);
  // Clears the terminal line (call before printing anything else to the same terminal).
  void finish();

 private:
  std::ostream& out_;
  bool terminal_;
  int columns_;
  double period_seconds_;
  double last_print_ = -1;
  std::string last_phases_;
  std::size_t last_width_ = 0;
};

// One line of progress: "12 s  GPU 0 bf16 5/9 3.0/10 s 30%  |  GPU 1 memory 8/9".
std::string format_progress(const burn::Progress& progress);

}  // namespace gpuscope
