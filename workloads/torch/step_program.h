// What one step does, for each task: a training step (forward under the precision mode's
// autocast, loss, backward, optional loss scaling, AdamW) or an inference forward. It runs
// eagerly, or captured as CUDA graphs (cuda_graph_step.h), one per input batch, and replayed.
#pragma once

#include <torch/optim/adamw.h>

#include <memory>
#include <optional>

#include "cuda_graph_step.h"
#include "device.h"
#include "fused_adamw.h"
#include "loss_scaler.h"
#include "run_config.h"
#include "synthetic_data.h"

namespace gpuscope::workloads {

class GradientBuckets;

class StepProgram {
 public:
  // `model` is on the device already, in the plan's parameter dtype.
  // Data parallel (`gradient_sync`, the model's gradient buckets): gradients are averaged over
  // the ranks between the backward and the optimizer step. A capture then records the bucket
  // all-reduces too (the hooks launch them while the step is captured; NCCL's communicator must
  // exist before, which the eager warm-up ensures).
  // With config.bucket_step, the fused AdamW updates each bucket's parameters as soon as that
  // bucket is averaged, overlapping the later buckets' all-reduces. It applies only with the
  // fused AdamW, without loss scaling (an fp16 step is skipped on an overflow in any gradient)
  // and with every parameter in one bucket (bucket_step() says whether it does).
  // Sharded buckets (GradientBuckets::sharded; DataParallel makes them only where
  // optimizer_shard_obstacle finds nothing, which those same conditions include): AdamW keeps
  // state for this rank's chunks only and updates them from the buckets' hooks, as each is
  // averaged; no whole-model state is made.
  // REQUIRES: `gradient_sync`, when given, outlives this program and was made on the model's
  // parameters. Throws c10::Error when sharded buckets leave a parameter out.
  StepProgram(std::shared_ptr<ReferenceModel> model, const RunConfig& config,
              const DeviceInfo& device, GradientBuckets* gradient_sync = nullptr);
  ~StepProgram();

  // Queues one step on `batch` on the current stream.
  void run_eager(const Batch& batch);
  // Captures one step per batch, graph i reading batches[i].
  // REQUIRES: CUDA; run_eager has run; `batches` outlive this program.
  void capture(const std::vector<Batch>& batches);
  // Replays the step captured on batches[index % batches.size()].
  // REQUIRES: capture() has run.
  void replay(size_t index);

  // Whether the optimizer steps each bucket's parameters as it is averaged (sharded or not).
  bool bucket_step() const { return bucket_step_; }

  // Frees what a step left (output, gradients, captured graphs, cached blocks), so that the
  // device can try again after a failed one.
  void release_step_memory();

  // The last step's loss as a 0-dim fp32 device tensor (training; undefined for inference).
  const at::Tensor& last_loss() const { return loss_; }
  const LossScaler* loss_scaler() const { return scaler_ ? &*scaler_ : nullptr; }
  // The last inference step's logits (undefined for training), current even when several
  // captured graphs took turns (which may mean one more replay).
  const at::Tensor& current_output();

 private:
  void train_step(const Batch& batch);
  void infer_step(const Batch& batch);
  // AdamW on every parameter (loss-scale unscaling first, and the step skipped on an overflow).
  void optimizer_step();
  // Sets every parameter's gradient to none.
  void drop_gradients();
  // Whether the gradient buckets hold each of the model's parameters exactly once.
  bool buckets_cover_each_parameter_once() const;
  // The optimizer: LibTorch's or the fused AdamW, split into the buckets with bucket steps, or
  // sharded over the ranks with sharded buckets.
  void make_optimizer(const RunConfig& config);

  std::shared_ptr<ReferenceModel> model_;
  ModelKind kind_;
  Task task_;
  PrecisionPlan plan_;
  bool fused_loss_ = false;
  DeviceInfo device_;
  AdamWOptions adamw_;
  std::optional<FusedAdamW> fused_;
  std::unique_ptr<ShardedAdamW> sharded_;  // in place of fused_, with sharded buckets
  std::unique_ptr<torch::optim::AdamW> libtorch_adamw_;
  std::optional<LossScaler> scaler_;
  at::Tensor loss_;    // fp32, written at the end of each training step
  at::Tensor output_;  // inference logits; with graphs, the last captured graph's output
  std::unique_ptr<CudaGraphSteps> graphs_;
  size_t last_replayed_ = 0;
  GradientBuckets* gradient_sync_ = nullptr;
  bool bucket_step_ = false;  // fused_ is split into the buckets, or sharded_ steps them
};

}  // namespace gpuscope::workloads
