// The burn worker's command line (one table of options), apart from main() so that tests can
// parse arguments without a GPU. Exit codes are gpuscope's (gpuscope/exit_codes.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/exit_codes.h"
#include "gpuscope/precision.h"
#include "gpuscope/status.h"

namespace gpuscope::burn_worker {

struct WorkerOptions {
  std::vector<Precision> precisions;  // in the order given; empty with --precision none
  double duration_seconds = 10;       // per precision
  double window_seconds = 1;
  int size = 8192;
  double memory_fraction = 0.9;
  int algorithm_candidates = 8;
  bool memory = false;
  bool host_link = false;
  std::uint64_t host_link_min_bytes = 4ull << 10;
  std::uint64_t host_link_max_bytes = 1ull << 30;
  bool inject_fault = false;
  double inject_fault_after_seconds = 2;
  bool list = false;
  // Every visible GPU together: NCCL all-reduce bus bandwidth and peer copies (interconnect.h),
  // instead of the per-device measurements.
  bool interconnect = false;
  std::uint64_t interconnect_max_bytes = 1ull << 30;
  std::uint64_t seed = 0x6770757363;
};

// "all", "none", or a comma-separated list of precision names ("fp16,bf16").
Result<std::vector<Precision>> parse_precision_list(std::string_view text);

struct ParsedArgs {
  std::optional<WorkerOptions> options;  // absent: exit with exit_code after printing message
  int exit_code = kExitOk;
  std::string message;  // help text (kExitOk) or what is wrong (kExitUsage)
};

// `args` excludes the program name.
ParsedArgs parse_worker_args(const std::vector<std::string>& args);

}  // namespace gpuscope::burn_worker
