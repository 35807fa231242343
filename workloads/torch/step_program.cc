#include "step_program.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>

#include "distributed/grad_buckets.h"

namespace gpuscope::workloads {

StepProgram::StepProgram(std::shared_ptr<ReferenceModel> model, const RunConfig& config,
                         const DeviceInfo& device, GradientBuckets* gradient_sync)
    : model_(std::move(model)),
      kind_(config.model),
      task_(config.task),
      plan_(plan_for(config.mode)),
      fused_loss_(resolve_switches(config, device.is_cuda()).fused_loss),
      device_(device),
      adamw_(config.adamw),
      gradient_sync_(gradient_sync) {
  if (!is_training(task_)) return;
  if (plan_.loss_scaling) scaler_.emplace(device.device, config.loss_scaler);
  make_optimizer(config);
  loss_ = at::zeros({}, at::TensorOptions().dtype(at::kFloat).device(device.device));
}

void StepProgram::make_optimizer(const RunConfig& config) {
  GradientBuckets* const buckets = gradient_sync_;
  if (buckets != nullptr && buckets->sharded()) {
    TORCH_CHECK(buckets_cover_each_parameter_once(),
                "a sharded optimizer needs every parameter in one gradient bucket");
    sharded_ = std::make_unique<ShardedAdamW>(buckets->shards(), device_.device, adamw_);
    buckets->set_shard_update(
        [this](size_t bucket, const at::Tensor& params, const at::Tensor& grads) {
          sharded_->step_shard(bucket, params, grads);
        });
    bucket_step_ = true;
    return;
  }
  if (!config.fused_adamw) {
    libtorch_adamw_ = std::make_unique<torch::optim::AdamW>(
        model_->parameters(), torch::optim::AdamWOptions(config.adamw.lr)
                                  .betas({config.adamw.beta1, config.adamw.beta2})
                                  .weight_decay(config.adamw.weight_decay)
                                  .eps(config.adamw.eps));
    return;
  }
  fused_.emplace(model_->parameters(), config.adamw);
  if (buckets == nullptr || !config.bucket_step || scaler_) return;
  // Every parameter in exactly one bucket (none frozen, none twice), as the split requires.
  if (!buckets_cover_each_parameter_once()) return;
  std::vector<std::vector<size_t>> parts;
  for (size_t b = 0; b < buckets->bucket_count(); ++b) parts.push_back(buckets->bucket_members(b));
  fused_->split(parts);
  bucket_step_ = true;
}

StepProgram::~StepProgram() = default;

void StepProgram::run_eager(const Batch& batch) {
  if (is_training(task_)) {
    train_step(batch);
  } else {
    infer_step(batch);
  }
}

void StepProgram::drop_gradients() {
  if (fused_) {
    fused_->zero_grad();
  } else if (libtorch_adamw_) {
    libtorch_adamw_->zero_grad(/*set_to_none=*/true);
  } else {
    for (auto& p : model_->parameters()) p.mutable_grad().reset();
  }
}

void StepProgram::train_step(const Batch& batch) {
  drop_gradients();
  at::Tensor loss;
  {
    AutocastScope autocast(plan_, device_.device.type());
    loss = model_loss(kind_, model_->forward(batch.input), batch.target, fused_loss_);
  }
  if (gradient_sync_ != nullptr) gradient_sync_->begin_backward();
  // Sharded, the buckets' hooks update the parameters during the backward: counted first.
  if (sharded_) sharded_->begin_step();
  (scaler_ ? scaler_->scale_loss(loss) : loss).backward();
  if (sharded_) {
    gradient_sync_->end_backward();
  } else if (bucket_step_) {
    // AdamW on each bucket's parameters as soon as its averages are in (make_optimizer).
    fused_->begin_step();
    gradient_sync_->end_backward([this](size_t bucket) { fused_->step_part(bucket); });
  } else {
    if (gradient_sync_ != nullptr) gradient_sync_->end_backward();
    optimizer_step();
  }
  if (scaler_) scaler_->update();
  loss_.copy_(loss.detach());
}

void StepProgram::optimizer_step() {
  if (fused_) {
    std::optional<at::Tensor> found_inf;
    if (scaler_) found_inf = scaler_->unscale(fused_->grads());
    fused_->step(found_inf);
  } else if (scaler_) {
    std::vector<at::Tensor> grads;
    for (const auto& p : model_->parameters()) grads.push_back(p.grad());
    // LibTorch's AdamW cannot skip a step on the device: this reads found_inf on the host, a
    // synchronization per step (the cost this switch exists to show).
    if (scaler_->unscale(grads).item<float>() == 0.0f) libtorch_adamw_->step();
  } else {
    libtorch_adamw_->step();
  }
}

bool StepProgram::buckets_cover_each_parameter_once() const {
  std::vector<int> seen(model_->parameters().size(), 0);
  for (size_t b = 0; b < gradient_sync_->bucket_count(); ++b) {
    for (const size_t m : gradient_sync_->bucket_members(b)) {
      if (m >= seen.size() || seen[m]++ != 0) return false;
    }
  }
  return std::find(seen.begin(), seen.end(), 0) == seen.end();
}

void StepProgram::infer_step(const Batch& batch) {
  // The previous step's logits go before this forward allocates its own: held through it, they
  // doubled the peak (GPT-2 at batch 32: two 3.3 GB logits), and in a capture they kept the graph
  // pool from reusing their memory.
  output_ = at::Tensor();
  c10::InferenceMode inference;
  AutocastScope autocast(plan_, device_.device.type());
  output_ = model_->forward(batch.input);
}

void StepProgram::capture(const std::vector<Batch>& batches) {
  graphs_ = std::make_unique<CudaGraphSteps>(device_);
  for (const Batch& batch : batches) {
    // run_eager sets the gradients to none first: each capture allocates its own in the pool,
    // and every replay of that graph rewrites them in place. Data parallel with bucket views:
    // the gradients are the buckets (allocated before, outside the pool), which every graph
    // rewrites.
    graphs_->capture([&] { run_eager(batch); });
  }
}

void StepProgram::replay(size_t index) {
  last_replayed_ = index % graphs_->size();
  graphs_->replay(last_replayed_);
}

const at::Tensor& StepProgram::current_output() {
  // output_ is the last captured graph's. The graphs share one pool, so another graph's replay
  // may have written over it since: replay its own graph first.
  if (graphs_ && graphs_->size() > 1 && last_replayed_ != graphs_->size() - 1) {
    replay(graphs_->size() - 1);
  }
  return output_;
}

void StepProgram::release_step_memory() {
  output_ = at::Tensor();
  graphs_.reset();  // a probe's captures; their pool goes once the tensors in it are gone
  last_replayed_ = 0;
  if (is_training(task_)) drop_gradients();
  release_cached_memory(device_);
}

}  // namespace gpuscope::workloads
