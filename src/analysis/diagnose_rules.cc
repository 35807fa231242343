#include "analysis/diagnose_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "analysis/gain_models.h"

namespace gpuscope::analysis::detail {
namespace {

constexpr double kMs = 1e3, kUs = 1e6, kPct = 100, kGiB = 1024.0 * 1024 * 1024, kMHz = 1e-6;

// gpu_idle: a GPU busy less than this share of the step, with no rule naming why, is a finding.
constexpr double kIdleGpuBusyShare = 0.7;

// sync_every_step: waits in at least this share of the traced steps.
constexpr double kWaitStepShare = 0.75;

// Communication exposed, or a wait for the slowest rank, of at least this share of the step and
// this long is a finding.
constexpr double kCommStepShare = 0.05;
constexpr double kCommMinS = 0.2e-3;

Evidence ev(std::string what, double value, std::string unit) {
  return {std::move(what), value, std::move(unit)};
}

Finding make(std::string id, std::string title, const Observations& o) {
  Finding f;
  f.id = std::move(id);
  f.severity = Severity::warning;
  f.title = std::move(title);
  f.subjects = {o.subject};
  f.gpu = o.gpu;
  return f;
}

// The GPU's idle time in a step without tracing's cost: what no rule can save more than.
double true_idle_s(const Observations& o) {
  return std::max(0.0, o.step_s - o.busy_s);
}

double busy_share(const Observations& o) {
  return o.step_s > 0 ? std::min(1.0, o.busy_s / o.step_s) : 0;
}

void add_step(Finding& f, const Observations& o) {
  f.evidence.push_back(ev("step time", o.step_s * kMs, "ms"));
}

// How many times the batch could grow before memory runs out (90 % of the GPU), counting all
// memory used as per-sample (the fixed part, weights and optimizer state, makes it larger).
std::optional<double> memory_headroom(const Observations& o) {
  if (!o.telemetry || !o.telemetry->memory_peak_bytes || !o.telemetry->memory_total_bytes)
    return std::nullopt;
  if (!(*o.telemetry->memory_peak_bytes > 0)) return std::nullopt;
  return 0.9 * *o.telemetry->memory_total_bytes / *o.telemetry->memory_peak_bytes;
}

// Tracing slows the host: what runs at the host's pace (launch-paced stretches) took this much
// longer while traced.
double untraced_share(const Observations& o) {
  return o.traced_step_s > 0 ? std::min(1.0, o.step_s / o.traced_step_s) : 1;
}

// The optimizer chain on the GPU without tracing's cost: its span scaled by the host's pace,
// never shorter than its kernels.
double chain_span_s(const Observations& o) {
  return std::max(o.optimizer_chain_kernel_s, o.optimizer_chain_span_s * untraced_share(o));
}

// The host's waits on the GPU per step. A light trace records none: there a small device-to-host
// copy every step (a loss read with .item()) stands for the wait it comes with.
double waits_per_step(const Observations& o) {
  return o.syncs_recorded ? o.syncs : o.small_d2h_copies;
}

// The GPU's idle in gaps under 1 ms without tracing's cost: tracing slows the host per CUDA call,
// which on a host-paced program opens short gaps between kernels that are not there untraced
// (the traced step's extra time). Capped by the step's true idle.
double short_idle_s(const Observations& o) {
  const double tracing = std::max(0.0, o.traced_step_s - o.step_s);
  return std::min(std::max(0.0, o.idle_short_s - tracing), true_idle_s(o));
}

// What a wait every step (a synchronization, a cudaFree) may cost, at most: after it the GPU's
// queue is empty and the host must launch the next work while it runs, so all of the step's idle
// time but the data wait's may be the wait's doing (never less than `idle_after`, the GPU idle
// right after the waits).
double idle_after_waits_s(const Observations& o, double idle_after) {
  return std::max(idle_after, true_idle_s(o) - std::min(o.data_wait_idle_s, true_idle_s(o)));
}

// Idle in short gaps that is neither the optimizer chain's nor the wait after a sync.
double launch_idle_s(const Observations& o) {
  const double chain_gaps = std::max(0.0, chain_span_s(o) - o.optimizer_chain_kernel_s);
  return std::max(0.0, short_idle_s(o) - chain_gaps);
}

// The GPU idles in short gaps between kernels most of the step (the launch-bound signature). A
// synchronization every step also looks like this (the GPU cannot run ahead of the host): it
// comes first, as does a cudaFree every step (which waits for the device too).
bool idles_between_kernels(const Observations& o) {
  return o.step_s > 0 && busy_share(o) < 0.6 && launch_idle_s(o) >= 0.2 * o.step_s &&
         o.mean_kernel_s < 50e-6 && waits_per_step(o) < 0.9 && o.device_frees < 0.9;
}

// With the launch-bound signature, a batch too small shows in the matrix kernels: well past the
// few microseconds a minimal GEMM takes (real work that grows with the batch) yet leaving the GPU
// idle, with memory to spare. Matrix kernels under 8 us are tiny whatever the batch: launch-bound.
// Measured, mean GEMM/convolution kernel: ResNet-18 at batch 8, 10.8 us (H100) and 11.2 us
// (H200); 64 Linear(256, 256) at batch 32, 4.6 us (H100), 48 at batch 64, 3.2 us (H200).
constexpr double kBatchSizedMatmulS = 8e-6;
bool small_batch_on_idle_gpu(const Observations& o) {
  auto k = memory_headroom(o);
  return idles_between_kernels(o) && k && *k >= 4 && o.matmul_kernels > 0 &&
         o.matmul_s / o.matmul_kernels >= kBatchSizedMatmulS;
}

bool is_power_or_thermal(const std::string& reason) {
  // NVML's names: sw_power_cap, hw_slowdown, sw_thermal_slowdown, hw_thermal_slowdown,
  // hw_power_brake_slowdown (not applications clocks, idle or sync boost: those are no fault).
  return reason.find("power") != std::string::npos || reason.find("thermal") != std::string::npos ||
         reason == "hw_slowdown";
}

}  // namespace

std::optional<Finding> input_bound(const Observations& o) {
  const double idle = std::min(o.data_wait_idle_s, true_idle_s(o));
  if (!(o.step_s > 0) || idle < 0.05 * o.step_s) return std::nullopt;
  Finding f = make("input_bound", "The GPU waits for the next batch: data loading is too slow", o);
  add_step(f, o);
  f.evidence.push_back(ev("waiting for data per step", o.data_wait_s * kMs, "ms"));
  f.evidence.push_back(ev("GPU idle while waiting", idle / o.step_s * kPct, "%"));
  f.evidence.push_back(ev("GPU busy", busy_share(o) * kPct, "%"));
  f.evidence.push_back(
      ev("DataLoader worker processes", static_cast<double>(o.worker_processes), ""));
  if (o.worker_processes == 0) {
    f.fix =
        "Load batches in worker processes, ahead of the GPU:\n"
        "  loader = DataLoader(dataset, batch_size=..., num_workers=8, pin_memory=True,\n"
        "                      persistent_workers=True, prefetch_factor=4)\n"
        "  for x, y in loader:\n"
        "      x = x.to(\"cuda\", non_blocking=True); y = y.to(\"cuda\", non_blocking=True)\n"
        "Raise num_workers up to the CPU cores you have while the wait shrinks.";
  } else {
    if (o.run_wall_s && *o.run_wall_s > 0) {
      f.evidence.push_back(
          ev("CPU per worker",
             o.worker_cpu_s / static_cast<double>(o.worker_processes) / *o.run_wall_s * kPct,
             "% of a core"));
    }
    f.fix = fmt::format(
        "The {} loader workers cannot keep up: raise num_workers (DataLoader(..., num_workers=N, "
        "pin_memory=True, persistent_workers=True)) while CPU cores are free, make each sample "
        "cheaper (decode on the GPU with torchvision.io.decode_jpeg(device=\"cuda\") or NVIDIA "
        "DALI, smaller or pre-resized images, cached preprocessing).",
        o.worker_processes);
  }
  f.expected_speedup = time_saved(o.step_s, 0.5 * idle, idle);
  f.confidence = Confidence::high;
  return f;
}

std::optional<Finding> pageable_copies(const Observations& o) {
  if (o.pageable_h2d_copies < 0.9 || !(o.step_s > 0) || o.pageable_h2d_s < 0.01 * o.step_s)
    return std::nullopt;
  Finding f = make("pageable_copies",
                   "Host-to-device copies come from pageable memory and block the host", o);
  add_step(f, o);
  f.evidence.push_back(ev("pageable host-to-device copies per step", o.pageable_h2d_copies, ""));
  f.evidence.push_back(
      ev("copied from pageable memory per step", o.pageable_h2d_bytes / 1e6, "MB"));
  f.evidence.push_back(ev("copy time per step", o.pageable_h2d_s * kMs, "ms"));
  if (o.pageable_h2d_s > 0) {
    f.evidence.push_back(ev("copy rate", o.pageable_h2d_bytes / o.pageable_h2d_s / 1e9, "GB/s"));
  }
  f.fix =
      "Copy from pinned memory without blocking, so copies overlap compute:\n"
      "  loader = DataLoader(dataset, ..., pin_memory=True)\n"
      "  x = x.to(\"cuda\", non_blocking=True)\n"
      "(for tensors made by hand: x = x.pin_memory() once, then .to(..., non_blocking=True))";
  const double copy = std::min(o.pageable_h2d_s, o.step_s);
  f.expected_speedup = time_saved(o.step_s, 0.5 * copy, copy);
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> sync_every_step(const Observations& o) {
  // In a light trace the GPU idle after each small copy back stands for the idle after the wait.
  // Waits in most steps, not a burst of them in one (a value logged every N steps, a window's
  // boundary) that a short trace averages to one a step.
  if (o.steps == 0 || waits_per_step(o) < 0.9 || o.wait_step_share < kWaitStepShare)
    return std::nullopt;
  const double idle = std::min(o.idle_after_sync_s, true_idle_s(o));
  const double all_idle = idle_after_waits_s(o, idle);
  Finding f = make("sync_every_step",
                   "The host waits for the GPU every step (.item(), .cpu(), print(tensor))", o);
  f.severity = idle >= 0.02 * o.step_s ? Severity::warning : Severity::info;
  add_step(f, o);
  if (o.syncs_recorded) f.evidence.push_back(ev("synchronizations per step", o.syncs, ""));
  f.evidence.push_back(ev("steps with a wait", o.wait_step_share * kPct, "%"));
  f.evidence.push_back(ev("small device-to-host copies per step", o.small_d2h_copies, ""));
  if (o.syncs_recorded) f.evidence.push_back(ev("host blocked per step", o.sync_s * kMs, "ms"));
  f.evidence.push_back(ev(o.syncs_recorded ? "GPU idle after the waits per step"
                                           : "GPU idle after the copies per step (light trace)",
                          idle * kMs, "ms"));
  f.evidence.push_back(ev("GPU idle in the step", all_idle / o.step_s * kPct, "%"));
  f.fix =
      "Read values back every N steps, not every step, and keep running sums on the GPU:\n"
      "  running += loss.detach()            # no .item() here\n"
      "  if step % 100 == 0: print((running / 100).item()); running.zero_()\n"
      "Avoid .item(), .cpu(), .numpy(), print(tensor) and torch.cuda.synchronize() inside the "
      "loop; a copy you need can go to pinned memory with .to(\"cpu\", non_blocking=True) and be "
      "read a step later.";
  f.expected_speedup = time_saved(o.step_s, idle, all_idle);
  f.confidence = o.syncs_recorded ? Confidence::high : Confidence::medium;
  return f;
}

std::optional<Finding> allocator_churn(const Observations& o) {
  if (o.steps == 0 || o.device_frees < 0.9) return std::nullopt;
  const double idle = std::min(o.idle_after_free_s, true_idle_s(o));
  const double all_idle = idle_after_waits_s(o, idle);  // a cudaFree waits as a sync does
  Finding f = make("allocator_churn",
                   "GPU memory goes back to the driver and is asked for again every step "
                   "(cudaFree waits for the whole GPU)",
                   o);
  f.severity = idle + o.allocator_s >= 0.02 * o.step_s ? Severity::warning : Severity::info;
  add_step(f, o);
  f.evidence.push_back(ev("cudaFree per step", o.device_frees, ""));
  f.evidence.push_back(ev("cudaMalloc per step", o.device_mallocs, ""));
  f.evidence.push_back(ev("host inside them per step", o.allocator_s * kMs, "ms"));
  f.evidence.push_back(ev("GPU idle after the frees per step", idle * kMs, "ms"));
  f.fix =
      "Let PyTorch's caching allocator keep its memory: take torch.cuda.empty_cache() (and "
      "gc.collect() with it) out of the training loop. If memory is tight, the allocator frees "
      "its cache to retry an allocation that failed (torch.cuda.memory_stats()"
      "[\"num_alloc_retries\"] grows every step): lower the memory a step needs (a smaller batch, "
      "AMP, activation checkpointing) or its fragmentation "
      "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True).";
  f.expected_speedup = time_saved(o.step_s, std::min(idle + o.allocator_s, all_idle), all_idle);
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> launch_bound(const Observations& o) {
  if (!(o.step_s > 0)) return std::nullopt;
  const double idle = launch_idle_s(o);
  if (!idles_between_kernels(o) || small_batch_on_idle_gpu(o)) return std::nullopt;
  Finding f = make("launch_bound",
                   "Launch-bound: kernels are shorter than launching them takes, the GPU idles "
                   "between them",
                   o);
  add_step(f, o);
  f.evidence.push_back(ev("GPU busy", busy_share(o) * kPct, "%"));
  f.evidence.push_back(ev("kernels per step", o.kernels, ""));
  f.evidence.push_back(ev("mean kernel", o.mean_kernel_s * kUs, "us"));
  if (o.matmul_kernels > 0)
    f.evidence.push_back(
        ev("mean GEMM/convolution kernel", o.matmul_s / o.matmul_kernels * kUs, "us"));
  if (o.launch_api_mean_s) {
    f.evidence.push_back(ev("mean launch call (traced)", *o.launch_api_mean_s * kUs, "us"));
  }
  f.evidence.push_back(ev("GPU idle in gaps under 1 ms per step", idle * kMs, "ms"));
  std::string bigger = "a larger batch";
  if (auto k = memory_headroom(o); k && *k >= 2) {
    f.evidence.push_back(ev("memory headroom (batch could grow)", *k, "x"));
    bigger = fmt::format("a larger batch (memory allows about {:.0f}x)", *k);
  }
  f.fix = fmt::format(
      "Launch fewer, larger kernels: capture the step in a CUDA graph with\n"
      "  model = torch.compile(model, mode=\"reduce-overhead\")\n"
      "(or torch.cuda.CUDAGraph / torch.cuda.make_graphed_callables), fuse with torch.compile, "
      "or use {}.",
      bigger);
  f.expected_speedup = time_saved(o.step_s, 0.5 * idle, idle);
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> no_tensor_cores(const Observations& o) {
  if (!(o.step_s > 0) || o.matmul_fp32_s < 0.1 * o.step_s) return std::nullopt;
  Finding f = make("no_tensor_cores",
                   "Matrix multiplies and convolutions run in fp32 without tensor cores", o);
  add_step(f, o);
  f.evidence.push_back(ev("fp32 GEMM/convolution time per step", o.matmul_fp32_s * kMs, "ms"));
  f.evidence.push_back(ev("share of the step", o.matmul_fp32_s / o.step_s * kPct, "%"));
  if (o.telemetry && o.telemetry->tensor_activity) {
    f.evidence.push_back(ev("tensor-core activity", *o.telemetry->tensor_activity * kPct, "%"));
  }
  // Without rates for this GPU, A100/H100-like ratios (TF32 8x, bf16 16x fp32).
  const double fp32 = o.rates.fp32.value_or(1), tf32 = o.rates.tf32.value_or(8),
               bf16 = o.rates.bf16.value_or(16);
  f.evidence.push_back(ev("bf16 / fp32 rate (" +
                              (o.rates.source.empty() ? std::string("assumed") : o.rates.source) +
                              ")",
                          bf16 / fp32, "x"));
  f.fix =
      "Run matrix work on tensor cores. Mixed precision (check that the loss still converges):\n"
      "  with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n"
      "      loss = loss_fn(model(x), y)\n"
      "or at least TF32 for fp32 models:\n"
      "  torch.set_float32_matmul_precision(\"high\")\n"
      "  torch.backends.cudnn.allow_tf32 = True";
  f.expected_speedup =
      tensor_core_gain(o.step_s, o.matmul_fp32_s, o.memory_bound_s, fp32, tf32, bf16);
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> small_batch(const Observations& o) {
  auto k = memory_headroom(o);
  if (!k || *k < 2) return std::nullopt;
  std::optional<double> sm;  // SM activity while the GPU is busy
  if (o.telemetry && o.telemetry->sm_activity && busy_share(o) > 0)
    sm = std::min(1.0, *o.telemetry->sm_activity / busy_share(o));
  const bool idle_gpu = small_batch_on_idle_gpu(o);
  // NVML's SM activity is evidence, not the test: a short training loop holds few GPM samples.
  const bool underfilled = busy_share(o) >= 0.6 && o.mean_kernel_s < 20e-6;
  if (!idle_gpu && !underfilled) return std::nullopt;
  Finding f = make("small_batch",
                   "The batch is small for this GPU: kernels leave most SMs and memory unused", o);
  add_step(f, o);
  const GpuObservations& t = *o.telemetry;
  f.evidence.push_back(ev("memory used at peak", *t.memory_peak_bytes / kGiB, "GiB"));
  f.evidence.push_back(ev("GPU memory", *t.memory_total_bytes / kGiB, "GiB"));
  f.evidence.push_back(ev("GPU busy", busy_share(o) * kPct, "%"));
  if (sm) f.evidence.push_back(ev("SM activity while busy", *sm * kPct, "%"));
  f.evidence.push_back(ev("mean kernel", o.mean_kernel_s * kUs, "us"));
  if (o.matmul_kernels > 0)
    f.evidence.push_back(
        ev("mean GEMM/convolution kernel", o.matmul_s / o.matmul_kernels * kUs, "us"));
  f.evidence.push_back(ev("largest batch that should fit", *k, "x today's"));
  f.fix = fmt::format(
      "Use a larger batch: about {:.0f}x today's should fit (batch_size=... in the DataLoader); "
      "scale the learning rate with it (linear scaling, warm-up) and check convergence.{}",
      std::floor(*k),
      idle_gpu ? " The GPU also idles between kernels: torch.compile(model, "
                 "mode=\"reduce-overhead\") (CUDA graphs) helps whatever the batch."
               : "");
  if (idle_gpu) {
    // Samples per second grow with the batch while the step's fixed costs (launches, the idle
    // GPU) are shared by more samples. Low: the GPU's work grows in proportion to the batch, so
    // it stops at a GPU busy all the step. High: the kernels first fill the SMs they leave idle
    // (SM activity while busy), else at most what memory allows.
    const double linear = std::max(1.0, std::min(*k, o.step_s / std::max(o.busy_s, 1e-9)));
    const double high = sm && *sm > 0 ? std::max(linear, std::min(*k, linear / *sm)) : *k;
    f.expected_speedup = GainRange{linear, high};  // linear <= *k
  } else {
    f.expected_speedup = batch_gain(*k, sm.value_or(busy_share(o)));
  }
  f.confidence = Confidence::low;
  return f;
}

std::optional<Finding> cudnn_defaults(const Observations& o) {
  if (!(o.step_s > 0) || o.conv_s <= 0 || o.layout_transpose_s < 0.03 * o.step_s)
    return std::nullopt;
  Finding f = make("cudnn_defaults",
                   "Convolutions run on NCHW tensors: cuDNN transposes layouts around them", o);
  add_step(f, o);
  f.evidence.push_back(ev("layout transposes per step", o.layout_transposes, ""));
  f.evidence.push_back(ev("transpose time per step", o.layout_transpose_s * kMs, "ms"));
  f.evidence.push_back(ev("convolution time per step", o.conv_s * kMs, "ms"));
  f.fix =
      "Keep tensors channels-last and let cuDNN pick its fastest algorithms (fixed input "
      "shapes):\n"
      "  torch.backends.cudnn.benchmark = True\n"
      "  model = model.to(memory_format=torch.channels_last)\n"
      "  x = x.to(\"cuda\", non_blocking=True).to(memory_format=torch.channels_last)";
  const double t = std::min(o.layout_transpose_s, o.step_s);
  f.expected_speedup = time_saved(o.step_s, 0.5 * t, t);
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> unfused_optimizer(const Observations& o) {
  if (!(o.step_s > 0) || o.optimizer_chain_kernels < 64 || chain_span_s(o) < 0.05 * o.step_s)
    return std::nullopt;
  Finding f = make("unfused_optimizer",
                   "The optimizer runs as a long chain of small kernels, one set per parameter", o);
  add_step(f, o);
  f.evidence.push_back(
      ev("elementwise kernels after the backward per step", o.optimizer_chain_kernels, ""));
  f.evidence.push_back(
      ev("their span on the GPU per step (traced)", o.optimizer_chain_span_s * kMs, "ms"));
  f.evidence.push_back(ev("their kernel time per step", o.optimizer_chain_kernel_s * kMs, "ms"));
  f.fix =
      "Use the fused optimizer (one kernel for all parameters):\n"
      "  optimizer = torch.optim.AdamW(model.parameters(), lr=..., fused=True)\n"
      "(or foreach=True; fused exists for Adam, AdamW, SGD, Adagrad on CUDA)";
  f.expected_speedup = fused_optimizer_gain(o.step_s, chain_span_s(o), o.optimizer_chain_kernel_s);
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> throttled(const Observations& o) {
  if (!o.telemetry || !(o.telemetry->seconds > 0)) return std::nullopt;
  const GpuObservations& t = *o.telemetry;
  std::string worst;
  double worst_s = 0;
  for (const auto& [reason, seconds] : t.throttle_s) {
    if (is_power_or_thermal(reason) && seconds > worst_s) worst = reason, worst_s = seconds;
  }
  const double share = std::min(1.0, worst_s / t.seconds);
  if (share < 0.1 || !t.sm_clock_mean_hz || !t.sm_clock_max_hz ||
      *t.sm_clock_max_hz < 1.03 * *t.sm_clock_mean_hz)
    return std::nullopt;
  const bool thermal = worst.find("thermal") != std::string::npos;
  Finding f = make("throttled",
                   thermal ? "The GPU slows its clocks down for heat"
                           : "The GPU slows its clocks down at its power limit",
                   o);
  f.evidence.push_back(ev("clocks held down (" + worst + ")", share * kPct, "% of the time"));
  f.evidence.push_back(ev("mean SM clock", *t.sm_clock_mean_hz * kMHz, "MHz"));
  f.evidence.push_back(ev("highest SM clock seen", *t.sm_clock_max_hz * kMHz, "MHz"));
  if (t.power_mean_w) f.evidence.push_back(ev("mean power", *t.power_mean_w, "W"));
  if (t.power_limit_w) f.evidence.push_back(ev("power limit", *t.power_limit_w, "W"));
  if (t.temperature_max_c) f.evidence.push_back(ev("hottest", *t.temperature_max_c, "degC"));
  f.fix = thermal ? "Cool the GPU: check airflow, fans and the room (nvidia-smi -q -d "
                    "TEMPERATURE,PERFORMANCE); a hot GPU runs slower whatever the program does."
                  : "The GPU runs at its power limit: check the limit (nvidia-smi -q -d POWER) "
                    "and raise it where allowed; if a lower limit is deliberate, `gpuscope sweep "
                    "-- CMD` shows the speed each limit costs.";
  f.expected_speedup = clock_gain(*t.sm_clock_mean_hz, *t.sm_clock_max_hz, busy_share(o));
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> shared_gpu(const Observations& o) {
  if (!o.telemetry || o.telemetry->others.empty()) return std::nullopt;
  const GpuObservations& t = *o.telemetry;
  Finding f = make("shared_gpu", "Other processes share this GPU", o);
  double memory = 0, util = 0;
  bool any_util = false;
  std::string who;
  for (const OtherProcess& p : t.others) {
    memory += p.memory_bytes.value_or(0);
    if (p.sm_utilization) util += *p.sm_utilization, any_util = true;
    if (!who.empty()) who += ", ";
    who += fmt::format("{} ({})", p.pid, p.name.empty() ? "?" : p.name);
  }
  f.evidence.push_back(ev("other processes", static_cast<double>(t.others.size()), ""));
  f.evidence.push_back(ev("their memory", memory / kGiB, "GiB"));
  if (any_util) f.evidence.push_back(ev("their SM use", util * kPct, "%"));
  f.fix = fmt::format(
      "Processes {} also run on GPU {}: give the job a GPU of its own (CUDA_VISIBLE_DEVICES, "
      "the scheduler's exclusive GPUs), or partition deliberately with MIG or MPS.",
      who, t.gpu);
  if (any_util && util > 0) {
    const double high = 1 / std::max(0.25, 1 - std::min(util, 1.0));
    f.expected_speedup = GainRange{1 + (high - 1) / 2, high};
  }
  f.confidence = Confidence::high;
  return f;
}

std::optional<Finding> exposed_communication(const Observations& o) {
  const double own = std::max(0.0, o.comm_exposed_s - o.comm_wait_s);
  if (!(o.step_s > 0) || o.comm_kernels + o.comm_copies <= 0 || own < kCommStepShare * o.step_s ||
      own < kCommMinS)
    return std::nullopt;
  Finding f = make("exposed_communication",
                   o.comm_kernels > 0
                       ? "Communication between GPUs (NCCL) runs with no computation beside it"
                       : "Copies between GPUs run with no computation beside them",
                   o);
  add_step(f, o);
  if (o.comm_kernels > 0)
    f.evidence.push_back(ev("collective kernels per step", o.comm_kernels, ""));
  if (o.comm_copies > 0) f.evidence.push_back(ev("peer copies per step", o.comm_copies, ""));
  f.evidence.push_back(ev("communication time per step", o.comm_s * kMs, "ms"));
  f.evidence.push_back(ev("exposed per step (no other GPU work beside it)", own * kMs, "ms"));
  f.evidence.push_back(ev("exposed share of the step", own / o.step_s * kPct, "%"));
  if (o.comm_s > 0) {
    f.evidence.push_back(ev("hidden behind computation",
                            std::clamp(1 - o.comm_exposed_s / o.comm_s, 0.0, 1.0) * kPct, "%"));
  }
  if (o.comm_wait_s > 0) {
    f.evidence.push_back(
        ev("waiting for a slower rank per step (left out above)", o.comm_wait_s * kMs, "ms"));
  }
  // The fix follows the collective that takes most of the time.
  std::string op = "all_reduce";
  double op_s = 0;
  for (const auto& [name, seconds] : o.comm_by_op_s) {
    if (seconds > op_s) op = name, op_s = seconds;
  }
  if (o.comm_s > 0 && op_s > 0) {
    f.evidence.push_back(ev("largest: " + op + ", share of the communication time",
                            std::min(1.0, op_s / o.comm_s) * kPct, "%"));
  }
  const std::string link =
      " Check the link: nvidia-smi topo -m (NVLink, or PCIe through which CPU), NCCL_P2P_DISABLE "
      "and NCCL_SHM_DISABLE unset, and `gpuscope burn` on the GPUs for the all-reduce bandwidth "
      "they reach.";
  if (op == "all_gather" || op == "reduce_scatter") {
    f.fix =
        "Sharded training (FSDP, ZeRO) gathers parameters and scatters gradients every step: "
        "prefetch the next gather while this layer computes\n"
        "  FSDP(model, forward_prefetch=True, backward_prefetch=BackwardPrefetch.BACKWARD_PRE)\n"
        "  (FSDP2: fully_shard(block, reshard_after_forward=False) for the last blocks)\n"
        "wrap fewer, larger units, shard within a node only (HYBRID_SHARD), or use "
        "DistributedDataParallel when the model and its optimizer fit one GPU. "
        "nn.SyncBatchNorm also gathers statistics in every BatchNorm layer: plain BatchNorm if "
        "each GPU's batch is large enough." +
        link;
  } else if (op == "broadcast") {
    f.fix =
        "Tensors are broadcast every step: DistributedDataParallel broadcasts the buffers "
        "(BatchNorm's running statistics) from rank 0 before each forward; "
        "DistributedDataParallel(model, ..., broadcast_buffers=False) skips it (the ranks' "
        "running statistics then differ slightly)." +
        link;
  } else if (op == "peer_copy") {
    f.fix =
        "Copies from one GPU to another (tensor.to(\"cuda:1\"), a model split across GPUs, "
        "a hand-made all-reduce through copies) hold the step: start each as soon as its data "
        "is ready, on a stream of its own (non_blocking=True inside "
        "torch.cuda.stream(side_stream)), and keep work queued beside it; a model split across "
        "GPUs needs micro-batches in flight (torch.distributed.pipelining) so each GPU computes "
        "while it sends; for gradients, DistributedDataParallel overlaps its all-reduces with "
        "the backward." +
        link;
  } else if (op == "send_recv") {
    f.fix =
        "Point-to-point transfers (pipeline parallelism) leave stages waiting: keep more "
        "micro-batches in flight (a 1F1B or interleaved schedule, torch.distributed.pipelining) "
        "so each stage computes while it sends." +
        link;
  } else {
    f.fix =
        "Overlap the all-reduces with the backward and make them cheaper:\n"
        "  model = DistributedDataParallel(model, gradient_as_bucket_view=True, "
        "static_graph=True,\n"
        "                                  bucket_cap_mb=...)  # larger (50-100) on a slow link\n"
        "  with model.no_sync(): loss.backward()   # micro-batches before the last, if you "
        "accumulate\n"
        "  model.register_comm_hook(None, torch.distributed.algorithms.ddp_comm_hooks.\n"
        "                           default_hooks.bf16_compress_hook)  # half the bytes\n"
        "A larger batch per GPU shares each step's all-reduce among more samples." +
        link;
  }
  f.expected_speedup = time_saved(o.step_s, 0.5 * own, own);
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> one_process_many_gpus(const Observations& o) {
  if (!(o.step_s > 0)) return std::nullopt;
  std::vector<std::pair<int, double>> busy;  // GPUs this process keeps busy, and how much
  for (const auto& [device, seconds] : o.device_busy_s) {
    if (seconds >= kCommStepShare * o.step_s) busy.emplace_back(device, seconds);
  }
  if (busy.size() < 2) return std::nullopt;
  Finding f = make("one_process_many_gpus",
                   fmt::format("One process drives {} GPUs (torch.nn.DataParallel, or a model "
                               "split across GPUs): they wait for each other and for one Python "
                               "thread",
                               busy.size()),
                   o);
  add_step(f, o);
  double idle = 0;
  for (const auto& [device, seconds] : busy) {
    const double share = std::min(1.0, seconds / o.step_s);
    f.evidence.push_back(ev(fmt::format("GPU {} busy (CUDA device)", device), share * kPct, "%"));
    idle += (1 - share) * o.step_s;
  }
  idle /= static_cast<double>(busy.size());
  f.evidence.push_back(ev("mean GPU idle per step", idle * kMs, "ms"));
  f.fix = fmt::format(
      "Run one process per GPU with DistributedDataParallel:\n"
      "  torchrun --nproc_per_node={} train.py\n"
      "  dist.init_process_group(\"nccl\"); rank = int(os.environ[\"LOCAL_RANK\"])\n"
      "  torch.cuda.set_device(rank); model = DistributedDataParallel(model.cuda(rank), "
      "device_ids=[rank])\n"
      "  loader = DataLoader(dataset, sampler=DistributedSampler(dataset), ...)\n"
      "nn.DataParallel copies the model to every GPU each step, gathers the outputs on the "
      "first GPU and drives every GPU from one Python thread; PyTorch recommends "
      "DistributedDataParallel even on one machine. A model split across GPUs on purpose "
      "(pipeline) needs micro-batches in flight to keep them busy "
      "(torch.distributed.pipelining).",
      busy.size());
  f.expected_speedup = time_saved(o.step_s, 0.5 * idle, idle);
  f.confidence = Confidence::medium;
  return f;
}

void share_out_waits(std::vector<Observations>& ranks) {
  std::optional<double> least;
  std::size_t communicating = 0;
  for (const Observations& o : ranks) {
    if (o.comm_kernels <= 0) continue;
    ++communicating;
    least = std::min(least.value_or(o.comm_exposed_s), o.comm_exposed_s);
  }
  if (communicating < 2) return;
  for (Observations& o : ranks) {
    if (o.comm_kernels > 0) o.comm_wait_s = o.comm_exposed_s - *least;
  }
}

std::optional<Finding> rank_imbalance(const std::vector<Observations>& ranks) {
  const Observations* slowest = nullptr;
  const Observations* most_waiting = nullptr;
  std::vector<double> steps;
  for (const Observations& o : ranks) {
    if (o.comm_kernels <= 0) continue;
    steps.push_back(o.step_s);
    if (!slowest || o.comm_exposed_s < slowest->comm_exposed_s) slowest = &o;
    if (!most_waiting || o.comm_wait_s > most_waiting->comm_wait_s) most_waiting = &o;
  }
  if (steps.size() < 2) return std::nullopt;
  std::sort(steps.begin(), steps.end());
  const double step = steps[steps.size() / 2];
  const double wait = most_waiting->comm_wait_s;
  if (!(step > 0) || wait < kCommStepShare * step || wait < kCommMinS) return std::nullopt;
  // The other ranks' means: their wait, their GPUs' computing (busy but for the exposed
  // collectives) and idle time.
  const auto computing_s = [](const Observations& o) { return o.busy_s - o.comm_exposed_s; };
  double others = 0, waits = 0, others_compute = 0, others_idle = 0;
  for (const Observations& o : ranks) {
    if (o.comm_kernels <= 0 || &o == slowest) continue;
    ++others;
    waits += o.comm_wait_s;
    others_compute += computing_s(o);
    others_idle += true_idle_s(o);
  }
  const double compute = computing_s(*slowest);
  const double idle = true_idle_s(*slowest);
  // With the work balanced, every rank would compute the ranks' mean.
  const double excess = compute - (others_compute + compute) / (others + 1);
  waits /= others, others_compute /= others, others_idle /= others;
  Finding f = make("rank_imbalance",
                   fmt::format("One rank is slower than the others, which wait for it in every "
                               "all-reduce: {}",
                               slowest->subject),
                   *slowest);
  f.evidence.push_back(ev("step time", step * kMs, "ms"));
  f.evidence.push_back(ev("the other ranks wait for it per step", waits * kMs, "ms"));
  f.evidence.push_back(ev("longest wait (" + most_waiting->subject + ")", wait * kMs, "ms"));
  f.evidence.push_back(ev("its GPU computing per step", compute * kMs, "ms"));
  f.evidence.push_back(ev("the others' GPUs computing per step", others_compute * kMs, "ms"));
  f.evidence.push_back(ev("its GPU idle per step", idle * kMs, "ms"));
  f.evidence.push_back(ev("the others' GPUs idle per step", others_idle * kMs, "ms"));
  const bool computes_longer = compute - others_compute >= idle - others_idle;
  if (computes_longer) {
    f.evidence.push_back(ev("its GPU computing beyond the ranks' mean", excess * kMs, "ms"));
  }
  f.fix =
      computes_longer
          ? "Its GPU computes longer each step than the others'. A slower or throttled card "
            "(a `throttled` finding for its GPU would say so; nvidia-smi -q -d "
            "PERFORMANCE,TEMPERATURE; a card in a hotter slot), other processes on it, or more "
            "work on this rank: uneven batches or sequence lengths (DistributedSampler with "
            "drop_last=True, batches bucketed by length), a rank that also evaluates."
          : "Its GPU idles longer each step than the others': its host does more. Work only one "
            "rank does inside the loop (logging, metrics, evaluation or checkpoints under `if "
            "rank == 0:`): do it every N steps or in a thread; too few CPU cores for this rank "
            "(DataLoader workers of all ranks together over the cores: keep num_workers x ranks "
            "within them).";
  // A rank whose host sets its pace (more so under tracing, which slows every host) arrives late
  // at the collectives too: part of the slowest GPU's extra work is then hidden from the wait.
  // Balanced work saves up to that extra work.
  const double saved_high = computes_longer ? std::max(wait, excess) : wait;
  if (computes_longer && excess > wait) {
    f.fix += fmt::format(
        " Its GPU computes {:.1f} ms a step beyond the ranks' mean, more than the {:.1f} ms the "
        "others were seen waiting: where a host sets a rank's pace (more so under tracing, "
        "which slows every host), part of it is hidden; balanced work saves up to that.",
        excess * kMs, wait * kMs);
  }
  f.expected_speedup = time_saved(step, 0.5 * wait, saved_high);
  f.confidence = Confidence::medium;
  return f;
}

std::optional<Finding> gpu_idle(const Observations& o) {
  const double idle = true_idle_s(o);
  if (!(o.step_s > 0) || busy_share(o) >= kIdleGpuBusyShare || idle < 0.3 * o.step_s ||
      idle < 0.5e-3) {
    return std::nullopt;
  }
  Finding f = make("gpu_idle",
                   fmt::format("The GPU idles {:.0f} % of each step, for a reason none of the "
                               "known causes explains",
                               idle / o.step_s * kPct),
                   o);
  add_step(f, o);
  f.evidence.push_back(ev("GPU busy", busy_share(o) * kPct, "%"));
  f.evidence.push_back(
      ev("GPU idle in gaps of 1 ms or more per step", std::min(o.idle_long_s, idle) * kMs, "ms"));
  f.evidence.push_back(ev("GPU idle in gaps under 1 ms per step", short_idle_s(o) * kMs, "ms"));
  std::optional<double> main_busy;
  if (o.main_thread_cpu_s && o.run_wall_s && *o.run_wall_s > 0) {
    main_busy = *o.main_thread_cpu_s / *o.run_wall_s;
    f.evidence.push_back(ev("main thread on a CPU", *main_busy * kPct, "% of the run"));
  }
  const std::string where =
      main_busy && *main_busy >= 0.8
          ? "The main thread is on a CPU nearly all the run: Python work in the loop body "
            "(metrics, logging, preprocessing outside the DataLoader, a loop over samples) runs "
            "while the GPU waits. "
      : main_busy ? "The main thread is off the CPU much of the run: it waits for something "
                    "that is not the GPU (files, the network, a lock, a sleep, another process). "
                  : "";
  f.fix = where +
          "Find where the time goes with py-spy (py-spy record -o profile.svg -- python "
          "train.py; py-spy dump --pid PID while it runs) or torch.profiler with CPU activities, "
          "then move that work into DataLoader workers or onto the GPU, do it every N steps, or "
          "overlap it with the GPU's work.";
  f.expected_speedup = time_saved(o.step_s, 0.5 * idle, idle);
  f.confidence = Confidence::low;
  return f;
}

std::vector<Finding> run_rules(const Observations& o) {
  std::vector<Finding> out;
  for (auto rule : {input_bound, pageable_copies, sync_every_step, allocator_churn, launch_bound,
                    no_tensor_cores, small_batch, cudnn_defaults, unfused_optimizer, throttled,
                    shared_gpu, exposed_communication, one_process_many_gpus}) {
    if (auto f = rule(o)) out.push_back(std::move(*f));
  }
  // A GPU idle much of the step that no rule explains (not even as a minor cause: a wait every
  // step) is still not healthy.
  if (out.empty()) {
    if (auto f = gpu_idle(o)) out.push_back(std::move(*f));
  }
  rank(out);
  return out;
}

std::optional<Finding> idle_gpus(const std::vector<GpuObservations>& gpus) {
  std::vector<int> idle;
  std::size_t used = 0;
  for (const GpuObservations& g : gpus) {
    if (g.used_by_command) {
      ++used;
    } else {
      idle.push_back(g.gpu);
    }
  }
  if (used == 0 || idle.empty()) return std::nullopt;
  Finding f;
  f.id = "idle_gpus";
  f.severity = Severity::info;
  f.title = "Some GPUs of this machine were never used by the job";
  f.evidence.push_back(ev("GPUs used", static_cast<double>(used), ""));
  f.evidence.push_back(ev("GPUs never used", static_cast<double>(idle.size()), ""));
  std::string list;
  for (int g : idle) {
    list += (list.empty() ? "" : ", ") + std::to_string(g);
    f.subjects.push_back(fmt::format("GPU {}", g));
  }
  f.fix = fmt::format(
      "If the job should use them, run one process per GPU: torchrun --nproc_per_node={} "
      "train.py with DistributedDataParallel (never used: GPU {}).",
      used + idle.size(), list);
  f.confidence = Confidence::high;
  return f;
}

Finding healthy(const Observations& o) {
  Finding f = make("healthy", "Nothing major holds this job back", o);
  f.severity = Severity::info;
  add_step(f, o);
  f.evidence.push_back(ev("GPU busy", busy_share(o) * kPct, "%"));
  if (o.telemetry && o.telemetry->sm_activity)
    f.evidence.push_back(ev("SM activity", *o.telemetry->sm_activity * kPct, "%"));
  if (o.telemetry && o.telemetry->tensor_activity)
    f.evidence.push_back(ev("tensor-core activity", *o.telemetry->tensor_activity * kPct, "%"));
  if (o.matmul_s > 0)
    f.evidence.push_back(
        ev("matrix time on tensor cores", o.matmul_tensor_s / o.matmul_s * kPct, "%"));
  std::string bigger;
  if (auto k = memory_headroom(o); k && *k >= 2)
    bigger = fmt::format("; a larger batch (memory allows about {:.0f}x)", *k);
  f.fix =
      "Still worth trying, one at a time, checking convergence after each: "
      "model = torch.compile(model) (fuses elementwise kernels, fewer launches)" +
      bigger + "; fp8 matmuls (Transformer Engine) on Hopper.";
  return f;
}

}  // namespace gpuscope::analysis::detail
