// What the diagnose rules read: the numbers of one traced process (a rank, or the program) and
// of the GPU it ran on, per step, in SI units. observe.cc fills them from a trace folder; tests
// construct them by hand. Everything a trace may lack is optional or zero, and a rule that needs
// it stays silent.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::analysis::detail {

// Another process on the same GPU (not the observed command or its descendants).
struct OtherProcess {
  unsigned pid = 0;
  std::string name;
  std::optional<double> memory_bytes;
  std::optional<double> sm_utilization;  // the driver's duty-cycle share, 0..1
};

// One GPU's NVML readings over the trace window (or over the whole recording when the window
// has too few samples).
struct GpuObservations {
  int gpu = 0;  // NVML index
  std::string name;
  bool used_by_command = false;
  double seconds = 0;  // covered by samples
  // Activities are kept only when samples cover the training loop (the steps' span): over the
  // whole recording they mostly measure start-up.
  bool covers_steps = false;
  std::optional<double> sm_activity, tensor_activity;  // time-weighted means, 0..1
  std::optional<double> memory_peak_bytes;             // the command's processes (else all)
  std::optional<double> memory_total_bytes;
  std::optional<double> sm_clock_mean_hz, sm_clock_max_hz;  // max: the highest sampled
  std::optional<double> power_mean_w, power_limit_w;
  std::optional<double> temperature_max_c;
  std::map<std::string, double> throttle_s;  // by reason name ("sw_power_cap", "hw_thermal")
  std::vector<OtherProcess> others;
};

// Per-precision dense rates in FLOP/s that the tensor-core gain model reads.
struct Rates {
  std::optional<double> fp32, tf32, bf16;
  std::string source;  // "burn (measured)" or "datasheet (H100 SXM5 80GB)"
};

// One process's trace window, per step (the median step where steps were found, else the
// window taken as one step).
struct Observations {
  std::string subject;  // "pid 1234" or "rank 1 (pid 1234)"
  std::optional<int> gpu;
  std::uint64_t steps = 0;  // traced steps; 0: none found, numbers are for the whole window
  // A step's wall time without tracing's cost: the median of the marked steps outside the
  // window when known (tracing slows the host), else the median traced step.
  double step_s = 0;
  double traced_step_s = 0;
  double busy_s = 0;  // GPU busy (union of kernels, copies, memsets)
  double kernels = 0;
  double kernel_s = 0;
  double mean_kernel_s = 0;
  // Idle time of the GPU by gap length (gaps under 1 ms: launch and host overhead).
  double idle_short_s = 0;  // gaps < 1 ms
  double idle_long_s = 0;   // gaps >= 1 ms

  double data_wait_s = 0;       // the main thread inside DataLoader.__next__
  double data_wait_idle_s = 0;  // of which the GPU sat idle

  double h2d_copies = 0, h2d_bytes = 0;
  double pageable_h2d_copies = 0, pageable_h2d_bytes = 0, pageable_h2d_s = 0;
  double d2h_copies = 0, small_d2h_copies = 0;  // small: under 64 KiB (a loss, a metric)

  double syncs = 0;
  double sync_s = 0;
  bool syncs_recorded = true;  // false: a light trace (no synchronization records)
  // The share of the traced steps with a wait in them (a sync; in a light trace, a small copy
  // to the host): a program that reads a value back every N steps waits in one step of N, which
  // a short window may still average to a wait per step.
  double wait_step_share = 1;
  double idle_after_sync_s = 0;  // GPU idle from a sync's end to the next GPU work

  // The CUDA caching allocator going to the driver (cudaMalloc / cudaFree, per step): each
  // cudaFree waits for the whole device first (torch.cuda.empty_cache() in the loop, or memory so
  // tight that the allocator frees its cache to retry an allocation).
  double device_mallocs = 0, device_frees = 0;
  double allocator_s = 0;        // host time inside those calls
  double idle_after_free_s = 0;  // GPU idle from a cudaFree's end to the next GPU work

  double launches = 0;                      // kernel launch API calls
  std::optional<double> launch_api_mean_s;  // mean duration of one launch call

  // Kernel time by what it computes.
  double matmul_s = 0;         // GEMM, convolution, attention
  double matmul_fp32_s = 0;    // of which fp32 without tensor cores
  double matmul_tensor_s = 0;  // of which on tensor cores
  double matmul_kernels = 0;
  double conv_s = 0;
  double memory_bound_s = 0;      // elementwise, reduction and copy kernels
  double layout_transpose_s = 0;  // NCHW <-> NHWC conversions
  double layout_transposes = 0;
  // The chain of small elementwise kernels launched after the step's last matrix kernel (the
  // optimizer's per-parameter updates when it is not fused).
  double optimizer_chain_kernels = 0;
  double optimizer_chain_kernel_s = 0;
  double optimizer_chain_span_s = 0;  // first start to last end on the GPU
  double fused_optimizer_kernels = 0;

  // Collective communication (NCCL kernels), per step: their kernel time, and the part of it with
  // no other GPU work of this process beside it (exposed: the step waits for it). An all-reduce
  // that starts before a slower rank is ready spins until it is, so with several ranks part of
  // the exposed time is waiting for the slowest: comm_wait_s, the exposed time beyond the least
  // exposed rank's (set across ranks by share_out_waits; 0 for one process).
  // Peer copies (comm_copies: a copy-engine all-reduce, a model split across GPUs) count as
  // communication too; comm_wait_s is NCCL's only (a copy engine waits without running).
  double comm_kernels = 0, comm_copies = 0, comm_s = 0, comm_exposed_s = 0, comm_wait_s = 0;
  // Time by collective ("all_gather", ...; "peer_copy" for the peer copies).
  std::map<std::string, double> comm_by_op_s;

  // Each GPU's busy time per step, by CUDA device: more than one when this process drives
  // several GPUs itself (torch.nn.DataParallel, a model split by hand).
  std::map<int, double> device_busy_s;

  // Host CPU over the whole run.
  std::optional<double> run_wall_s;
  std::optional<double> main_thread_cpu_s;
  std::size_t worker_processes = 0;  // descendants that used CPU (DataLoader workers)
  double worker_cpu_s = 0;

  std::optional<GpuObservations> telemetry;
  Rates rates;
};

}  // namespace gpuscope::analysis::detail
