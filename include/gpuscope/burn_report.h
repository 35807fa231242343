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

// The one reader of that document (the store and the study read burn through it): every field
// burn_to_json writes comes back, so burn_to_json(burn_from_json(burn_to_json(r))) is
// burn_to_json(r). Derived fields (ok, exit_code, each target's label and visible_devices,
// errors.total) are computed again rather than read. A document without "kind" is taken as
// burn's. data_error, naming the field's path ("burn.targets[0].gemm[1].flop_per_s: expected
// an object"), for another kind, a schema_version it does not read, a row without what names it
// (precision, kernel, direction), or a field of the wrong type.
Result<burn::Report> burn_from_json(const nlohmann::json& document);

namespace burn {
// The names burn --json gives them: "passed", "verification_failed", "failed", "interrupted";
// "measured", "skipped", "failed", "not_run".
const char* outcome_name(Outcome outcome);
const char* row_status_name(RowStatus status);
}  // namespace burn

// The options as burn --json writes them ("options"): what the run was asked to do.
nlohmann::json burn_options_to_json(const burn::Options& options);

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
