// AdamW over a fixed list of parameters on ATen's fused kernel (at::_fused_adamw_): one kernel
// chain for all parameters of a dtype instead of LibTorch's torch::optim::AdamW, which runs a
// chain of small kernels per parameter and keeps its step count on the host. All state (moments,
// step count) lives on the parameters' device: step() never synchronizes and can be captured in a
// CUDA graph. Same update as torch.optim.AdamW(fused=True).
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <utility>
#include <vector>

namespace gpuscope::workloads {

struct AdamWOptions {
  double lr = 1e-4;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double weight_decay = 0.01;
  double eps = 1e-8;
};

class FusedAdamW {
 public:
  // REQUIRES: params are leaf tensors on one device (floating point; mixed dtypes allowed).
  FusedAdamW(const std::vector<at::Tensor>& params, const AdamWOptions& options);

  // One update from each parameter's .grad(). With found_inf (0-dim float32 on the device, 1 when
  // the gradients overflowed), a step where it is 1 changes neither parameters, moments nor the
  // step count.
  // REQUIRES: every parameter has a defined grad.
  void step(const std::optional<at::Tensor>& found_inf = std::nullopt);
  // Stepping in parts, so that a part's update can start as soon as its gradients are ready (data
  // parallel: each bucket's parameters once its all-reduce ended, while later buckets are still
  // being reduced). `parts` are indices into the constructor's params, each exactly once. Then one
  // update is begin_step() and step_part(k) for every k, in any order: the same update as
  // step(), to the bit (the kernel is elementwise), in more launches.
  // Throws c10::Error when the parts do not cover each parameter exactly once.
  void split(const std::vector<std::vector<size_t>>& parts);
  size_t part_count() const { return parts_.size(); }
  // Counts the update (the step count the bias corrections use). REQUIRES: split().
  void begin_step();
  // Updates part k's parameters from their .grad(). REQUIRES: begin_step() this update; every
  // parameter of the part has a defined grad.
  void step_part(size_t k);
  // Drops the gradients (set to undefined, as zero_grad(set_to_none=True)).
  void zero_grad();
  // Gradients in parameter order. REQUIRES: every parameter has a defined grad.
  std::vector<at::Tensor> grads() const;
  // The number of updates applied (0-dim float32 on the device).
  const at::Tensor& step_count() const { return step_; }

 private:
  struct Group {  // the parameters of one dtype: one fused call
    std::vector<at::Tensor> params, exp_avgs, exp_avg_sqs;
  };
  static size_t add_to(std::vector<Group>& groups, const at::Tensor& p, const at::Tensor& exp_avg,
                       const at::Tensor& exp_avg_sq);
  void step_groups(const std::vector<Group>& groups, const std::optional<at::Tensor>& found_inf);

  AdamWOptions options_;
  std::vector<at::Tensor> params_;
  std::vector<Group> groups_;
  std::vector<std::pair<at::Tensor, at::Tensor>> state_;  // each parameter's moments, in order
  std::vector<std::vector<Group>> parts_;  // split(): each part's parameters, by dtype
  // One step counter shared by every parameter: the kernel only reads it, so one increment per
  // step replaces a foreach over hundreds of tensors.
  at::Tensor step_;
};

// AdamW over flat shards, for data parallel with a sharded optimizer (ZeRO stage 1; the
// copy-engine all-reduce's launch_sharded): shard k is a contiguous run of one dtype's elements —
// a rank's chunk of a gradient bucket and the same elements of the parameters laid out as the
// bucket — handed to step_shard as flat tensors. Only those elements have moments here: 1/N of
// FusedAdamW's state at N ranks. The same kernel as FusedAdamW, so each element's update is the
// same to the bit (padding between parameters is zeros, which the update keeps at zero).
class ShardedAdamW {
 public:
  struct Shard {
    int64_t elements = 0;
    at::ScalarType dtype = at::kFloat;
  };
  ShardedAdamW(const std::vector<Shard>& shards, const at::Device& device,
               const AdamWOptions& options);
  // Counts the update (the step count the bias corrections use), on the current stream.
  void begin_step();
  // Updates shard k's parameters from its gradients, on the current stream. REQUIRES:
  // begin_step() this update, ordered before this stream's work; params and grads flat, with
  // shard k's elements and dtype.
  void step_shard(size_t k, const at::Tensor& params, const at::Tensor& grads);
  // Device memory of the moments.
  int64_t state_bytes() const;

 private:
  AdamWOptions options_;
  std::vector<at::Tensor> exp_avgs_, exp_avg_sqs_;
  at::Tensor step_;
};

}  // namespace gpuscope::workloads
