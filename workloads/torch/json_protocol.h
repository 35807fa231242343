// gpuscope-torch's result protocol: one JSON object per line on stdout, for the parent process
// (gpuscope bench). Every object has "v" (kProtocolVersion: bumped when a field changes meaning
// or disappears, not when one is added) and "type". Units are SI (seconds, bytes, samples/s);
// missing data is null. README.md documents each type's fields.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "batch_search.h"
#include "device.h"
#include "run_config.h"
#include "timing.h"

namespace gpuscope::workloads {

inline constexpr int kProtocolVersion = 1;

// gpuscope-torch's exit statuses (the `done` line repeats them).
enum TorchExit : int {
  kTorchExitOk = 0,
  kTorchExitUsage = 2,
  kTorchExitSkipped = 3,  // mode unsupported here, out of memory, or no CUDA device
  kTorchExitFailed = 6,
  kTorchExitInterrupted = 130,
};

// Receives each finished line (without the newline).
using LineSink = std::function<void(const std::string& line)>;

struct StartRecord {
  const RunConfig* config = nullptr;
  const DeviceInfo* device = nullptr;
  ResolvedSwitches switches;
  int64_t parameters = 0;
  std::string torch_version;
  bool pinned = false;             // page-locked staging as it applies (input host or jpeg)
  std::vector<std::string> notes;  // how the run differs from what was asked, for people
};

// What the host-fed input path did (input host or jpeg).
struct InputEvidence {
  double wait_seconds = 0;        // timed windows: the training thread waiting for a batch
  double wait_seconds_total = 0;  // the whole run
  int64_t batches = 0;
  int64_t h2d_bytes = 0;
  double produce_seconds = 0;    // loader threads producing batches, summed over threads
  int64_t unreadable_files = 0;  // jpeg: skipped files
};

struct WindowRecord {
  int64_t index = 0;
  int64_t steps = 0;
  int64_t samples = 0;
  double seconds = 0;
};

// A data-parallel run (world size > 1): how this rank and, on rank 0, the job did. The
// communication figures are per timed step.
struct DataParallelRecord {
  int world_size = 1;
  std::string backend;  // "nccl" or "gloo"
  int64_t buckets = 0;
  int64_t bucket_cap_bytes = 0;
  bool bucket_views = true;        // gradients are views of their buckets (--bucket-views)
  std::string grad_comm = "fp32";  // the all-reduces' dtype (--grad-comm): fp32 or bf16
  // What ran them: "copy-engine", or the backend ("nccl", "gloo"), or "none" with --grad-sync
  // off; with --all-reduce auto, why not the copy engines when it is the backend.
  std::string all_reduce = "nccl";
  std::optional<std::string> all_reduce_fallback;
  bool bucket_step = false;            // AdamW stepped each bucket as it was averaged
  bool optimizer_sharded = false;      // each rank updated its chunk of each bucket (ZeRO-1)
  bool grad_sync = true;               // false: --grad-sync off, no gradient was averaged
  int64_t global_batch = 0;            // batch x world size
  double rank_samples_per_second = 0;  // this rank's median
  std::optional<double> collective_seconds_per_step;  // all-reduces' device time (NCCL)
  // What the backward did not hide (+ any copy back); nullopt when no step was timed (CUDA
  // graphs: the replays run no host code).
  std::optional<double> exposed_seconds_per_step;
  std::optional<double> overlap_fraction;  // 1 - exposed / collective, in [0, 1]
  std::string ranks_json;                  // rank 0: every rank's record (a JSON array)
};

struct RunResult {
  ModelKind model = ModelKind::vit_b16;
  Task task = Task::train;
  PrecisionMode mode = PrecisionMode::fp32;
  int64_t batch = 0;
  bool batch_searched = false;
  double samples_per_second = 0;  // median over windows
  std::vector<double> window_samples_per_second;
  Summary step_seconds;
  std::optional<int64_t> peak_allocated_bytes;  // CUDA only
  std::optional<int64_t> peak_reserved_bytes;
  std::vector<double> losses;            // training: every step's loss, warm-up included
  std::optional<double> loss_scale;      // fp16 AMP: the scale at the end
  std::optional<int64_t> skipped_steps;  // fp16 AMP: steps skipped for inf/NaN gradients
  // Inference: mean |logit| of the last step, to compare variants of one configuration (same
  // seed, same inputs) for numerical agreement.
  std::optional<double> output_mean_abs;
  std::optional<InputEvidence> input;  // host-fed inputs only
  std::vector<double> loss_scales;     // guard, fp16 AMP: the scale after every step
  std::optional<double> seconds;       // guard: wall time of all steps, capture included
  double warmup_seconds = 0;
  std::optional<double> capture_seconds;  // CUDA graphs only
  bool partial = false;                   // interrupted before the last window
  // --trace / --memory-snapshot: the files written (absent when not asked), and why one was not.
  std::optional<std::string> trace_file;
  std::optional<std::string> memory_snapshot_file;
  std::optional<std::string> diagnostics_problem;
  // Data parallel only. On rank 0 samples_per_second is the job's (sum over ranks) and the
  // losses the mean over ranks.
  std::optional<DataParallelRecord> data_parallel;
};

// One rank's entry of DataParallelRecord::ranks_json.
std::string rank_record_json(int rank, int local_rank, const DeviceInfo& device,
                             const RunResult& result);

std::string start_line(const StartRecord& record);
std::string batch_probe_line(const BatchTry& attempt);
std::string window_line(const WindowRecord& record);
std::string result_line(const RunResult& result);
// code: "not_supported", "out_of_memory", "no_device".
std::string skipped_line(std::string_view code, std::string_view reason);
// code: "invalid_argument", "internal".
std::string error_line(std::string_view code, std::string_view message);
std::string done_line(int exit_code);

}  // namespace gpuscope::workloads
