// The JSON outputs of gpuscope commands, read as store records (read_result_file dispatches).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuscope/burn.h"
#include "gpuscope/status.h"
#include "gpuscope/store.h"

namespace gpuscope::store::detail {

// 13000 -> "13.0", as nvidia-smi prints a CUDA driver version.
std::optional<std::string> cuda_version_text(std::optional<int> version);

// The run of a command's JSON output: its kind, the command line that writes that output, and
// the host the output names (SystemInfo and burn::Report carry hostname, gpuscope_version,
// driver_version and cuda_driver_version alike).
template <typename Output>
RunRecord command_run(std::string kind, std::string command_line, const Output& output) {
  RunRecord run;
  run.kind = std::move(kind);
  run.command_line = std::move(command_line);
  run.host = output.hostname;
  run.gpuscope_version = output.gpuscope_version;
  run.driver_version = output.driver_version;
  run.cuda_driver_version = cuda_version_text(output.cuda_driver_version);
  return run;
}

// A burn precision's verification counts as one names::kGemmErrors measurement: the total
// wrong (mismatched, NaN, Inf elements and failed reference tiles), each count as a tag.
Measurement gemm_errors_measurement(int gpu, std::string configuration,
                                    const std::string& precision, const burn::ErrorCounts& errors);

// `gpuscope info --json` (schema 1): one "info" run whose GPUs carry identity, limits, peak
// rates, and their whole info record in details.
Result<RunData> run_from_info_json(const nlohmann::json& info);

// `gpuscope burn --json` (schema 1): one "burn" run, a GPU record per target (GPU or MIG
// instance) whose peak rates are the ones burn compared with.
Result<RunData> run_from_burn_json(const nlohmann::json& report);

// gpuscope-burn-worker's JSON lines (protocol 1), one object per line: one "burn" run of one
// GPU. Lines of other protocol versions are refused (data_error).
Result<RunData> run_from_burn_worker_lines(const std::vector<nlohmann::json>& lines);

// `gpuscope monitor --jsonl` (schema 1): one "monitor" run, a telemetry series per GPU and
// metric. REQUIRES: lines not empty, the first the "session" line.
Result<RunData> run_from_monitor_lines(const std::vector<nlohmann::json>& lines);

// `gpuscope trace`'s summary.json (schema 1): one "trace" run of the window's numbers, its
// steps and its timeline sample (names::kTrace*). No GPUs: the trace's telemetry stays in the
// trace folder.
Result<RunData> run_from_trace_summary(const nlohmann::json& summary);

}  // namespace gpuscope::store::detail
