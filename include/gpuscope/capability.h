// burn's GPU engine: what one CUDA device really delivers — matrix throughput per precision
// with every result verified, device memory bandwidth, and the host link.
//
// Everything here runs on the first CUDA device the process can see (the caller chooses it with
// CUDA_VISIBLE_DEVICES, a MIG instance's UUID included, before the process starts). Results are
// plain records in SI units: seconds, bytes, FLOP (floating-point or integer multiply-adds count
// as two operations), bytes per second, FLOP per second. No function here throws; failures come
// back as a Status whose Code says what happened:
//   no_driver / no_device  no usable CUDA device (nothing else was run)
//   not_supported          this device cannot run the test (fp8 before cc 8.9, no cuBLASLt kernel)
//   out_of_memory          the buffers do not fit in the memory allowed
//   gpu_lost               the GPU failed while running (uncorrectable ECC error, illegal
//                          address or launch failure inside a library kernel, fell off the bus)
//   invalid_argument       the options are wrong
// A verification error (a wrong GEMM result) is not a failed call: it is data, in
// GemmBurnResult::verification, and the caller decides that the run failed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/precision.h"
#include "gpuscope/status.h"

namespace gpuscope::capability {

// ---------------------------------------------------------------------------------------------
// The device

struct DeviceInfo {
  std::string name;             // "NVIDIA H100 80GB HBM3"
  std::string uuid;             // "GPU-1a2b..." ("MIG-..." when CUDA_VISIBLE_DEVICES names one)
  std::string pci_bus_id;       // "0000:41:00.0"
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES as this process saw it ("" if unset)
  int cc_major = 0;             // compute capability, e.g. 9.0
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t total_memory_bytes = 0;
  std::uint64_t free_memory_bytes = 0;  // when queried, before this process allocated anything
  std::uint64_t l2_cache_bytes = 0;
  int memory_bus_width_bits = 0;
  std::optional<double> sm_clock_max_hz;  // absent when the driver does not report it
  std::optional<double> memory_clock_max_hz;
  int driver_version = 0;   // CUDA version the driver supports, e.g. 13000
  int runtime_version = 0;  // CUDA runtime this program was built with
};

// Opens the first visible CUDA device and describes it.
// Fails with no_driver (no NVIDIA driver, or one too old for this CUDA runtime) or no_device.
Result<DeviceInfo> query_device();

// Whether a precision can run on this device, judged from the compute capability alone.
// A supported precision can still be skipped later (no cuBLASLt kernel, out of memory).
struct PrecisionSupport {
  Precision precision = Precision::fp32;
  bool supported = false;
  std::string reason;  // why not, when !supported
};
std::vector<PrecisionSupport> precision_support(const DeviceInfo& device);

// ---------------------------------------------------------------------------------------------
// GEMM burn: one precision, square n x n x n products through cuBLASLt, for a duration.

// What cuBLASLt ran (its algorithm configuration attributes), chosen by timing the heuristic's
// top candidates and keeping the best median.
struct GemmAlgorithm {
  int algo_id = -1;
  int tile_id = 0;
  int stages_id = 0;
  int split_k = 0;
  int reduction_scheme = 0;
  int cta_swizzling = 0;
  int custom_option = 0;
  int inner_shape_id = 0;
  int cluster_shape_id = 0;
  std::uint64_t workspace_bytes = 0;        // what this algorithm needs (<= the workspace offered)
  std::uint64_t workspace_limit_bytes = 0;  // what was offered (32 MiB on cc 9.x and newer)
  int candidates_timed = 0;                 // heuristic candidates that ran
  int unrepeatable = 0;       // faster candidates dropped: two runs on the same inputs differed
  double median_seconds = 0;  // median time of one GEMM of the chosen algorithm
  std::string compute_type;   // "CUBLAS_COMPUTE_32F_FAST_TF32"
  std::string layout;         // "NN" or "TN" (op(A), op(B); column-major storage)
};

// Errors found. Every GEMM result is compared bit for bit with the first result of the same
// inputs (gpu-burn's test: a healthy GPU repeats itself exactly) and scanned for NaN and Inf;
// every few seconds a few 16x16 tiles of a result are recomputed on the host in fp64 from the
// same inputs and compared within the precision's tolerance (src/capability/verify.h).
struct Verification {
  std::uint64_t gemms_checked = 0;  // results compared with their first result
  std::uint64_t mismatches = 0;     // elements that differed from the first result
  std::uint64_t nan_count = 0;      // NaN elements in any result
  std::uint64_t inf_count = 0;      // Inf elements in any result
  int reference_tiles_checked = 0;
  int reference_tiles_failed = 0;
  double reference_max_error = 0;  // largest normalized error seen in a reference tile
  double reference_tolerance = 0;  // the precision's limit for that error
  bool ok() const {
    return mismatches == 0 && nan_count == 0 && inf_count == 0 && reference_tiles_failed == 0;
  }
};

// One timing window (about window_seconds of GPU time). Its GEMMs are timed with CUDA events
// around each group of GEMMs; the verification kernels between groups are not in gemm_seconds
// but are in wall_seconds.
struct GemmWindow {
  int index = 0;
  std::uint64_t gemms = 0;
  double flop = 0;             // gemms * 2 n^3
  double gemm_seconds = 0;     // GPU time spent in the GEMMs
  double wall_seconds = 0;     // GPU time of the whole window, verification included
  double elapsed_seconds = 0;  // host time since the timed phase started, at the window's end
  // Errors found in this window's results (the run's totals are in Verification).
  std::uint64_t mismatches = 0;
  std::uint64_t nan_count = 0;
  std::uint64_t inf_count = 0;
  double flop_per_second() const { return gemm_seconds > 0 ? flop / gemm_seconds : 0; }
};

struct GemmBurnOptions {
  Precision precision = Precision::bf16;
  int n = 8192;                  // REQUIRES: a multiple of 16, >= 64
  double duration_seconds = 10;  // timed phase; setup and algorithm choice come on top
  double window_seconds = 1;
  double memory_fraction = 0.9;  // share of the free device memory the buffers may take
  int algorithm_candidates = 8;  // heuristic candidates to time
  double reference_check_interval_seconds = 5;
  int reference_tiles = 3;            // tiles recomputed on the host per check
  std::uint64_t seed = 0x6770757363;  // the random inputs are a function of the seed
  // Fault injection (tests of the detection itself): after this many seconds of the timed
  // phase, one element of one GEMM result is corrupted on the GPU before it is verified.
  std::optional<double> inject_fault_after_seconds;

  // Called on the calling thread after each window.
  std::function<void(const GemmWindow&)> on_window;
  // Polled at each window boundary; true stops the run (the result is marked partial).
  std::function<bool()> should_stop;
};

struct WindowSummary {
  int count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
};

struct GemmBurnResult {
  Precision precision = Precision::bf16;
  int n = 0;
  int input_sets = 0;              // distinct (A, B) pairs rotated through
  int work_slots = 0;              // GEMMs per timed group
  std::uint64_t device_bytes = 0;  // device memory the run allocated
  double setup_seconds = 0;        // filling, algorithm choice, first results (host clock)
  GemmAlgorithm algorithm;
  std::vector<GemmWindow> windows;
  WindowSummary flop_per_second;  // over windows
  Verification verification;
  bool fault_injected = false;
  bool partial = false;  // stopped before duration_seconds
};

// REQUIRES: options valid (invalid_argument otherwise).
Result<GemmBurnResult> run_gemm_burn(const GemmBurnOptions& options);

// ---------------------------------------------------------------------------------------------
// Device memory bandwidth

enum class MemoryKernel {
  copy,    // reads a buffer, writes another: bytes counted = read + written (2x buffer); the
           // fastest of a few copy kernels (16-byte vectors, different block/tile shapes)
  read,    // reads a buffer: bytes counted = read
  write,   // writes a buffer: bytes counted = written
  memcpy,  // cudaMemcpyAsync device to device, counted like copy (read + written)
};
std::string_view memory_kernel_name(MemoryKernel kernel);

struct MemoryBandwidthResult {
  MemoryKernel kernel = MemoryKernel::copy;
  std::uint64_t buffer_bytes = 0;
  std::uint64_t bytes_read = 0;     // per run
  std::uint64_t bytes_written = 0;  // per run
  int repeats = 0;
  double median_seconds = 0;  // per run, CUDA events
  double min_seconds = 0;
  double max_seconds = 0;
  // copy: the fastest of several copy kernels, each timed briefly first ("one_pass", ...).
  std::string variant;
  std::uint64_t bytes_counted() const { return bytes_read + bytes_written; }
  double bytes_per_second() const {
    return median_seconds > 0 ? static_cast<double>(bytes_counted()) / median_seconds : 0;
  }
};

struct MemoryBandwidthOptions {
  std::uint64_t buffer_bytes = 0;  // 0: 1 GiB, at least 16 x L2, within memory_fraction
  double memory_fraction = 0.9;
  int repeats = 20;
  std::function<bool()> should_stop;
};

Result<std::vector<MemoryBandwidthResult>> measure_memory_bandwidth(
    const MemoryBandwidthOptions& options);

// ---------------------------------------------------------------------------------------------
// Host link

enum class HostMemory { pageable, pinned };
enum class CopyDirection { host_to_device, device_to_host, bidirectional };
std::string_view host_memory_name(HostMemory memory);
std::string_view copy_direction_name(CopyDirection direction);

struct HostLinkResult {
  CopyDirection direction = CopyDirection::host_to_device;
  HostMemory memory = HostMemory::pinned;
  std::uint64_t size_bytes = 0;   // per direction
  std::uint64_t bytes_moved = 0;  // size, or 2 x size when bidirectional
  int repeats = 0;
  double median_seconds = 0;
  double min_seconds = 0;
  double max_seconds = 0;
  // "cuda_events" (pinned: the copy itself) or "host_clock" (pageable: the call is synchronous,
  // so the time the calling thread waits is what a program sees).
  std::string timing;
  double bytes_per_second() const {
    return median_seconds > 0 ? static_cast<double>(bytes_moved) / median_seconds : 0;
  }
};

struct HostLinkOptions {
  std::uint64_t min_bytes = 4 << 10;
  std::uint64_t max_bytes = 1ull << 30;
  int size_factor = 4;  // sizes min, min*f, min*f^2, ... <= max
  std::function<bool()> should_stop;
  std::function<void(const HostLinkResult&)> on_result;  // each row as it is measured
};

Result<std::vector<HostLinkResult>> measure_host_link(const HostLinkOptions& options);

// Copy overlapped with compute: a host->device copy issued first on one stream and an
// arithmetic kernel of about the same duration issued after it on another — what a training
// loop does when it loads the next batch. With pinned memory the copy call returns at once and
// both run together; with pageable memory the copy call holds the thread, so they serialize.
struct OverlapResult {
  HostMemory memory = HostMemory::pinned;
  std::uint64_t copy_bytes = 0;
  int repeats = 0;
  double copy_seconds = 0;  // medians, host clock from the first call to the last sync
  double compute_seconds = 0;
  double both_seconds = 0;
  // 1 = fully overlapped (both = max), 0 = serialized (both = sum).
  double efficiency() const;
};

struct OverlapOptions {
  std::uint64_t copy_bytes = 256ull << 20;
  int repeats = 5;
  std::function<bool()> should_stop;
};

Result<std::vector<OverlapResult>> measure_copy_compute_overlap(const OverlapOptions& options);

// ---------------------------------------------------------------------------------------------
// Arithmetic shared with the callers

// 2 n^3: one multiply and one add per inner-product term.
double gemm_flop(std::int64_t m, std::int64_t n, std::int64_t k);
// Median (mean of the middle two for an even count), min, max, mean. Empty input: all zero.
WindowSummary summarize(const std::vector<double>& values);

}  // namespace gpuscope::capability
