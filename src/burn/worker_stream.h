// The parent's side of the worker protocol (tools/gpuscope-burn-worker/PROTOCOL.md, version 1):
// one worker's stdout lines, parsed into records stamped with the time they arrived.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/burn.h"
#include "gpuscope/precision.h"
#include "gpuscope/status.h"

namespace gpuscope::burn::detail {

inline constexpr int kWorkerProtocolVersion = 1;

// A `gemm_window` line.
struct WindowLine {
  Precision precision = Precision::fp32;
  int index = 0;
  std::uint64_t gemms = 0;
  double flop = 0;
  double seconds = 0;          // GPU time in the GEMMs
  double elapsed_seconds = 0;  // worker's host time since the precision's timed phase began
  double flop_per_second = 0;
  std::uint64_t mismatches = 0, nan_count = 0, inf_count = 0;
  double received_at = 0;  // seconds since the run started, when the parent read the line
};

// A `gemm_result` line.
struct ResultLine {
  Precision precision = Precision::fp32;
  int n = 0;
  bool partial = false;
  int windows = 0;
  std::optional<double> median, min, max, mean;  // FLOP/s over the windows
  ErrorCounts errors;
  bool verification_ok = false;
  bool fault_injected = false;
  std::string algorithm;  // "algo 66 tile 18 stages 20 TN CUBLAS_COMPUTE_32F"
  double received_at = 0;
};

struct ProgressLine {
  Precision precision = Precision::fp32;
  double elapsed_seconds = 0;
  double fraction = 0;
};

struct DoneLine {
  bool ok = false;
  bool interrupted = false;
  int exit_code = 0;
};

// What a `device` line says beyond WorkerDevice (the store keeps it; burn reads NVML's own).
struct DeviceDetails {
  std::optional<double> sm_clock_max_hz, memory_clock_max_hz;
  std::optional<int> driver_cuda_version, runtime_cuda_version;  // 13000 = CUDA 13.0
};

// Everything one worker said, in arrival order within each kind.
struct WorkerStream {
  std::optional<WorkerDevice> device;
  DeviceDetails device_details;
  std::vector<WindowLine> windows;
  std::vector<ResultLine> results;
  std::vector<SkippedTest> skipped;
  std::vector<MemoryRow> memory;
  std::vector<std::string> memory_variants;  // memory[i]'s copy kernel; empty when not said
  std::vector<HostLinkRow> host_link;
  std::vector<OverlapRow> overlap;
  std::vector<WorkerError> errors;
  std::optional<ProgressLine> last_progress;
  std::optional<DoneLine> done;
  std::string last_type;                    // type of the last good line
  std::optional<Precision> last_precision;  // precision of the last GEMM line of any kind
  std::vector<std::string> problems;        // lines that were not protocol objects (first few)
  int bad_lines = 0;
};

// Adds one stdout line read at `received_at`. A line that is not a version-1 protocol object
// is counted in `bad_lines` (the first few quoted in `problems`) and returns data_error; an
// unknown `type` is ignored (newer workers may add some). A `device` line naming another GPU
// than an earlier one is refused the same way: one worker's lines describe one GPU.
Status add_line(WorkerStream& stream, std::string_view line, double received_at);
// The same for a line already parsed (the store reads whole files of them).
Status add_object(WorkerStream& stream, const nlohmann::json& object, double received_at);

}  // namespace gpuscope::burn::detail
