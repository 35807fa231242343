// `gpuscope burn`: what each GPU (or MIG instance) really delivers — GEMM throughput per
// precision with every result verified, device memory bandwidth and the host link — measured by
// one gpuscope-burn-worker process per device, all at once, while this process samples NVML
// telemetry once a second. The results are plain records for the reporters (burn_report.h).
//
// Flow: plan() turns `gpuscope info`'s records into targets (one per GPU, or one per MIG
// instance when MIG is on, each with the CUDA_VISIBLE_DEVICES its worker gets); run() starts the
// workers and the sampler, shows progress through a callback, and aggregates per target and
// precision. Units are SI (seconds, bytes, FLOP, watts, joules); fractions are 0..1.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/datasheet.h"
#include "gpuscope/info.h"
#include "gpuscope/interconnect.h"
#include "gpuscope/nvml.h"
#include "gpuscope/precision.h"
#include "gpuscope/status.h"
#include "gpuscope/target.h"

namespace gpuscope::burn {

struct Options {
  std::vector<Precision> precisions;  // empty: all of them (the worker skips what cannot run)
  double duration_seconds = 10;       // timed GEMMs per precision
  std::optional<int> size;            // GEMM n (the worker's default: 8192)
  std::optional<double> memory_fraction;
  bool memory = true;     // device-memory bandwidth
  bool host_link = true;  // host<->device copies and copy/compute overlap
  bool inject_fault = false;
  std::string gpu;     // "": every GPU; else a selector (gpuscope/target.h)
  std::string worker;  // the worker program; "": locate_worker()
  double sample_interval_seconds = 1.0;
  // Kill a worker that runs longer than this; absent: a generous default from the options.
  std::optional<double> worker_timeout_seconds;
  // Catch SIGINT/SIGTERM during run() and forward them to the workers (which stop at their
  // next window and report what they measured). Off only where the caller handles signals.
  bool forward_interrupts = true;
  // With two or more whole GPUs: after the per-GPU tests, NCCL all-reduce bus bandwidth and
  // peer copies among them (one worker that sees them all, `--interconnect`).
  bool interconnect = true;
};

// One worker's device: a whole GPU or a MIG instance (CUDA_VISIBLE_DEVICES = uuid()), with the
// peak rates its results are compared with.
struct Target : gpuscope::Target {
  // Peak rates to compare with: the datasheet's for a whole GPU; for a MIG instance, the GPU's
  // compute peaks scaled by the instance's share of the SMs (absent when a count is unknown).
  std::optional<PeakRates> peak;
  std::string peak_note;  // how `peak` was obtained when it is not the plain datasheet entry
  bool gpm_supported = false;
  bool energy_counter = false;
};

struct Plan {
  std::vector<Target> targets;
};

// One target per selected GPU, or per MIG instance of a GPU in MIG mode (resolve_targets with
// TargetUse::run over targets_of(info)). `gpu` selects as Options::gpu does, among the GPUs of
// `info` (collected with the same selector). Fails with not_found for a selector that matches
// nothing, and no_device when a GPU in MIG mode has no instance to run on (and nothing else is
// selected).
Result<Plan> plan(const SystemInfo& info, const std::string& gpu);

// The worker program: $GPUSCOPE_BURN_WORKER when set; else gpuscope-burn-worker next to this
// executable, then ../gpuscope-burn-worker/gpuscope-burn-worker (the build tree). Fails with
// not_found naming every place looked at.
Result<std::string> locate_worker();

// "fp16,bf16" -> {fp16, bf16}; "all" -> {} (every precision). invalid_argument names a wrong
// entry.
Result<std::vector<Precision>> parse_precisions(std::string_view text);

// The worker's arguments for `options` (without the program name).
std::vector<std::string> worker_arguments(const Options& options);

// ---------------------------------------------------------------------------------------------
// Results

enum class RowStatus {
  measured,  // timed windows exist (partial when interrupted)
  skipped,   // the device cannot run it (the worker said why)
  failed,    // the worker reported an error for it, or died in it
  not_run,   // the worker never got to it (stopped or failed earlier)
};

// Verification counts of one precision (the worker's gemm_result, else its windows' sums).
struct ErrorCounts {
  std::uint64_t gemms_checked = 0;
  std::uint64_t mismatches = 0;  // elements that differed from the first result of the inputs
  std::uint64_t nan_count = 0;
  std::uint64_t inf_count = 0;
  int reference_tiles_checked = 0;
  int reference_tiles_failed = 0;
  std::uint64_t total() const {
    return mismatches + nan_count + inf_count + static_cast<std::uint64_t>(reference_tiles_failed);
  }
};

struct ThrottleTime {
  std::string reason;  // nvml::throttle_reason_name()
  double seconds = 0;
  // true: estimated from the sampled clock-event masks (no NVML time counter for it)
  bool estimated = false;
};

// One precision on one target. Telemetry readings are over the precision's timed span (from
// the start of its first window to the end of its last); absent when not measured.
struct PrecisionRow {
  Precision precision = Precision::fp32;
  RowStatus status = RowStatus::not_run;
  std::string note;  // why skipped/failed/not run; "partial" details
  bool partial = false;
  std::optional<int> n;  // GEMM size
  int windows = 0;
  // FLOP/s (int8: OP/s) over the ~1 s windows: the median is the sustained rate.
  std::optional<double> flop_per_second_median, flop_per_second_min, flop_per_second_max;
  std::optional<double> fraction_of_peak;  // median / datasheet peak
  ErrorCounts errors;
  bool verified = false;  // a gemm_result arrived and its verification passed
  double span_seconds = 0;
  std::optional<double> temperature_max_c;
  // As the span began: rates of a warm GPU are lower (1-4 % on an H100 started at 74 vs 50 °C).
  std::optional<double> temperature_start_c;
  std::optional<double> power_average_w;
  std::optional<double> energy_j;        // over the span
  std::string energy_source;             // "energy_counter" or "power_samples"
  std::optional<double> flop_per_joule;  // FLOP of the span's windows / energy
  std::optional<double> sm_clock_average_hz;
  std::optional<double> sm_activity;      // GPM, fraction
  std::optional<double> tensor_activity;  // GPM, fraction
  std::vector<ThrottleTime> throttle;     // every reason measured, zeros included
  std::string algorithm;                  // cuBLASLt's choice, e.g. "algo 66 tile 18 TN"
};

struct MemoryRow {
  std::string kernel;  // copy, read, write, memcpy
  std::uint64_t buffer_bytes = 0;
  std::uint64_t bytes_read = 0, bytes_written = 0;
  std::uint64_t bytes_counted = 0;  // read + written: a copy counts its buffer twice
  double seconds = 0;               // median
  double bytes_per_second = 0;      // bytes_counted / seconds
  std::optional<double> fraction_of_peak;
};

struct HostLinkRow {
  std::string memory;     // pinned, pageable
  std::string direction;  // h2d, d2h, bidirectional
  std::uint64_t size_bytes = 0;
  std::uint64_t bytes_moved = 0;  // 2 x size when bidirectional
  double seconds = 0;             // median
  double bytes_per_second = 0;
  std::string timing;  // cuda_events, host_clock
};

struct OverlapRow {
  std::string memory;
  std::uint64_t copy_bytes = 0;
  double copy_seconds = 0, compute_seconds = 0, both_seconds = 0;
  double efficiency = 0;  // 1: copy fully hidden behind compute; 0: serialized
};

struct SkippedTest {
  std::string what;  // "memory", "host_link", "overlap", or a precision
  std::string code;
  std::string reason;
};

struct WorkerError {
  std::string code;  // a gpuscope Code name, or verification_failed
  std::string message;
  std::optional<Precision> precision;
};

// What the worker said about its device (its `device` line).
struct WorkerDevice {
  std::string name, uuid, pci_bus_id, compute_capability;
  int sm_count = 0;
  std::uint64_t total_memory_bytes = 0;
};

enum class Outcome {
  passed,               // everything ran and verified
  verification_failed,  // a GEMM gave a wrong result: the GPU is faulty
  failed,               // the worker could not run, crashed, was killed or timed out
  interrupted,          // stopped by Ctrl-C; what was measured is kept
};

struct TargetResult {
  Target target;
  Outcome outcome = Outcome::failed;
  std::string failure;  // why, for failed / verification_failed
  std::optional<int> worker_exit_code;
  std::optional<int> worker_signal;
  std::optional<WorkerDevice> device;
  std::vector<PrecisionRow> gemm;
  std::vector<MemoryRow> memory;
  std::vector<HostLinkRow> host_link;
  std::vector<OverlapRow> overlap;
  std::vector<SkippedTest> skipped;
  std::vector<WorkerError> errors;
  std::vector<std::string> warnings;     // protocol problems, telemetry gaps, short spans
  std::vector<std::string> stderr_tail;  // the worker's last stderr lines
};

// What the links between the GPUs delivered (Options::interconnect).
struct InterconnectReport {
  std::vector<std::string> gpus;  // the GPUs taking part ("GPU 0"), in the worker's CUDA order
  // How each pair is joined (NVML), gpus[first] to gpus[second]; pairs NVML says nothing of
  // are left out.
  struct Link {
    std::size_t first = 0, second = 0;
    nvml::GpuLink link;
  };
  std::vector<Link> links;
  std::vector<capability::AllReduceResult> all_reduce;
  std::vector<capability::PeerCopyResult> peer_copies;  // CUDA ordinals index `gpus`
  std::vector<std::string> problems;  // the worker's error lines, a failed start or exit
  bool ok = false;                    // the worker said done and ok

  // gpus[ordinal], or "CUDA device N" for an ordinal the worker should not have given.
  std::string gpu_name(int ordinal) const;
};

struct Report {
  std::string gpuscope_version;
  std::string hostname;
  std::optional<std::string> driver_version;
  std::optional<int> cuda_driver_version;
  Options options;
  std::string worker;
  std::vector<TargetResult> targets;
  bool interrupted = false;
  double wall_seconds = 0;
  std::optional<InterconnectReport> interconnect;  // run with two or more whole GPUs
};

// The process exit code for a report: 1 when any GEMM result was wrong, else 130 when
// interrupted, else the first failed target's (the worker's code when it is one of gpuscope's
// 3..5, else 6), else 0.
int exit_code(const Report& report);

// ---------------------------------------------------------------------------------------------
// Running

// One target's state while the workers run.
struct TargetProgress {
  std::string label;
  std::string phase;           // "starting", a precision ("bf16"), "memory", "host link", "done"
  int step = 0;                // 1-based index of the phase among the planned ones
  int steps = 0;               // planned phases
  double elapsed_seconds = 0;  // in the current precision's timed phase
  double fraction = 0;         // of the current precision's --duration
  bool finished = false;
  bool failed = false;
};

struct Progress {
  double elapsed_seconds = 0;  // since run() started
  std::vector<TargetProgress> targets;
  bool interrupted = false;  // Ctrl-C seen: the workers are stopping
};

using ProgressCallback = std::function<void(const Progress&)>;

// Runs every target's worker at once, samples telemetry, and aggregates. `session` must be the
// one `info` was collected with; it is used from a sampler thread while run() lasts. `progress`
// (optional) is called about four times a second from the calling thread.
//
// Failures of single workers are results (Outcome::failed), not errors. Fails only when nothing
// can start: io_error when the worker program is missing or not executable (a broken
// installation), no_device for an empty plan, internal when signal handling cannot be set up.
Result<Report> run(const nvml::Session& session, const SystemInfo& info, const Plan& plan,
                   const Options& options, const ProgressCallback& progress = {});

}  // namespace gpuscope::burn
