// One gpuscope-torch run: which model, task, precision mode and batch, on which device, with
// which speed switches. Plain data; options.h parses it from the command line and runner.h runs
// it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "distributed/launch_env.h"
#include "fused_adamw.h"
#include "loss_scaler.h"
#include "models/model.h"
#include "precision_mode.h"

namespace gpuscope::workloads {

// guard: the convergence guard, a fixed number of training steps on a small learnable task
// (guard_data.h) with every step's loss reported and no timing windows.
enum class Task { train, infer, guard };
std::string_view task_name(Task task);
// Accepts the names task_name() gives, and "inference" for infer; nullopt for anything else.
std::optional<Task> parse_task(std::string_view name);
// train and guard: forward, loss, backward and AdamW.
inline bool is_training(Task task) {
  return task != Task::infer;
}

// Where a step's batch comes from (input/step_inputs.h).
enum class InputKind { synthetic, host, jpeg };
std::string_view input_kind_name(InputKind kind);
std::optional<InputKind> parse_input_kind(std::string_view name);

struct InputOptions {
  InputKind kind = InputKind::synthetic;
  int64_t loader_workers = 4;  // host and jpeg: loader threads; 0 = on the training thread
  bool pinned = true;          // page-locked staging (falls back to pageable on the CPU)
  bool non_blocking = true;    // copy on a stream of its own, overlapping compute
  std::string data;            // jpeg: the image folder
};

// `--make-images DIR`: not a run; the program writes a generated JPEG set and exits.
struct MakeImagesOptions {
  std::string dir;  // empty: not asked
  int64_t count = 64;
  int64_t classes = 4;
};

// --trace and --memory-snapshot (diagnostics.h): files that explain a run, written after it.
struct DiagnosticsOptions {
  std::string trace_path;  // empty: no trace
  int64_t trace_steps = 3;
  std::string memory_snapshot_path;  // empty: no allocator history
};

// A switch whose default depends on the device or model.
enum class Toggle { automatic, on, off };
std::string_view toggle_name(Toggle toggle);
std::optional<Toggle> parse_toggle(std::string_view name);  // on, off, auto

// Which kernels at::scaled_dot_product_attention may use. `automatic` leaves LibTorch's own
// choice (flash, then memory-efficient, then math); the others allow exactly one.
enum class SdpaBackend { automatic, flash, efficient, math, cudnn };
std::string_view sdpa_backend_name(SdpaBackend backend);
std::optional<SdpaBackend> parse_sdpa_backend(std::string_view name);

// The dtype data parallel all-reduces gradients in: their own (fp32), or bf16 as DDP's
// bf16_compress_hook does (grad_buckets.h).
enum class GradComm { fp32, bf16 };
std::string_view grad_comm_name(GradComm comm);
std::optional<GradComm> parse_grad_comm(std::string_view name);

// What data parallel all-reduces gradients with: the process group's backend (NCCL on CUDA,
// Gloo on the CPU), or the GPUs' copy engines between peer-mapped buffers, every rank on one
// host (distributed/peer_all_reduce.h); auto: the copy engines wherever every rank can use them
// (copy_engine_obstacle), else the backend.
enum class AllReduce { automatic, nccl, copy_engine };
std::string_view all_reduce_name(AllReduce all_reduce);
std::optional<AllReduce> parse_all_reduce(std::string_view name);

struct RunConfig {
  ModelKind model = ModelKind::vit_b16;
  Task task = Task::train;
  PrecisionMode mode = PrecisionMode::amp_bf16;
  std::optional<int64_t> batch;  // nullopt: the model's default
  bool batch_auto = false;       // search for the largest batch that fits
  int64_t max_batch = 8192;      // upper bound of the search
  std::string device = "cuda";

  int64_t warmup_steps = 10;  // eager steps before timing (and before a capture)
  int64_t windows = 5;        // timed windows; samples/s is the median over them; 0: until
                              // stopped (the stop flag ends the run normally)
  int64_t steps_per_window = 10;
  // Distinct device batches, used in turn; 0: input_sets_for() chooses. Host-fed: refilled, >= 2.
  int64_t input_sets = 0;

  Toggle cuda_graphs = Toggle::automatic;  // auto: on for CUDA
  bool fused_adamw = true;                 // off: LibTorch's torch::optim::AdamW
  bool cudnn_benchmark = true;
  Toggle channels_last = Toggle::automatic;  // auto: on for ResNet-50 on CUDA
  SdpaBackend sdpa = SdpaBackend::automatic;
  Toggle gelu_epilogue = Toggle::automatic;      // auto: on for GPT-2 inference on CUDA
  Toggle residual_epilogue = Toggle::automatic;  // auto: on for inference on CUDA
  Toggle own_layer_norm = Toggle::automatic;     // auto: on for inference on CUDA
  Toggle patch_gemm = Toggle::automatic;         // auto: on (ViT-B/16's patch embedding)
  Toggle fused_loss = Toggle::automatic;         // auto: on for GPT-2 training on CUDA

  InputOptions input;
  int64_t guard_steps = 100;  // --task guard: training steps, every one's loss reported
  MakeImagesOptions make_images;
  DiagnosticsOptions diagnostics;

  ModelShape shape;
  AdamWOptions adamw;
  LossScalerOptions loss_scaler;
  uint64_t seed = 0;
  bool quiet = false;  // no summary line on stderr

  // Data parallel (distributed/data_parallel.h). --world-size N: without launch variables the
  // program starts N ranks of itself; with them it must agree with WORLD_SIZE.
  std::optional<int64_t> world_size;
  LaunchEnv launch;              // this process's place in the job (set by main from the env)
  int64_t dist_timeout_s = 300;  // a collective or rendezvous that takes longer fails
  int64_t bucket_cap_mb = 25;    // gradient bucket size, as DDP's bucket_cap_mb
  // Gradients are views of their buckets (DDP's gradient_as_bucket_view); off: the averages are
  // copied back into gradients of their own after the all-reduces.
  bool bucket_views = true;
  GradComm grad_comm = GradComm::fp32;          // no effect at world size 1 (nothing to all-reduce)
  AllReduce all_reduce = AllReduce::automatic;  // likewise
  // The fused AdamW updates each bucket's parameters as soon as that bucket's all-reduce ended,
  // while later buckets' run; off: all of them after the last (grad_buckets.h).
  bool bucket_step = true;
  // The optimizer sharded over the ranks (ZeRO stage 1, grad_buckets.h): each rank keeps AdamW's
  // moments for its chunk of each bucket, updates that chunk and sends it to the others. auto:
  // where it applies (the copy-engine all-reduce, the fused AdamW stepping each bucket, no loss
  // scaling); on: fails where it does not.
  Toggle shard_optimizer = Toggle::automatic;
  // Gradients averaged over the ranks (on, as DDP); off: each rank trains its own replica with no
  // all-reduce at all, all ranks at once. Not training: the rate the GPUs reach together without
  // communication, the ceiling of a synchronous data-parallel step (bench --no-sync-ceiling).
  bool grad_sync = true;
};

// The switches as they apply to a run on a given device (automatic ones decided).
struct ResolvedSwitches {
  bool cuda_graphs = false;
  bool channels_last = false;
  bool gelu_epilogue = false;
  bool residual_epilogue = false;
  bool own_layer_norm = false;
  bool patch_gemm = false;
  bool fused_loss = false;
};
ResolvedSwitches resolve_switches(const RunConfig& config, bool on_cuda);

// The device batches a run keeps: --input-sets when given; otherwise one for synthetic inference
// (the Python references time one input tensor, and a second would be memory they do not hold)
// and two for training. Host-fed inputs need at least two: one refilled while a step reads the
// other.
int64_t input_sets_for(const RunConfig& config);

// Why the optimizer cannot be sharded over the ranks (--shard-optimizer), given whether the copy
// engines all-reduce the gradients; empty when it can. The options' part (copy_engine true) is
// known before a run starts.
std::string optimizer_shard_obstacle(const RunConfig& config, bool copy_engine);

// Why this run cannot be data parallel (world size > 1: --world-size, or WORLD_SIZE from a
// launcher); empty when it can. Known from the options, before any rank starts.
std::string data_parallel_obstacle(const RunConfig& config);

}  // namespace gpuscope::workloads
