// Data-parallel gradient averaging as PyTorch's DistributedDataParallel does it: the parameters'
// gradients are packed into buckets of about `bucket_cap_bytes` (parameters in reverse order, as
// the backward produces them; one dtype per bucket), each bucket's all-reduce starts from a
// gradient hook as soon as its last gradient is ready — overlapping the rest of the backward.
//
// Gradients as bucket views (the default; DDP's gradient_as_bucket_view=True): the hook copies
// the fresh gradient into the parameter's place in its bucket (each place aligned to 64
// elements, for the optimizer's vectorized loads) and hands autograd that place instead, which
// autograd then keeps as the parameter's .grad (it steals a gradient it is the only holder of). The
// all-reduce averages the bucket in place, so the averages are the gradients: no copy back after
// the last all-reduce (which was on the step's critical path) and no second copy of the gradients
// in memory. One copy per gradient remains, where DDP's zero-then-accumulate costs a memset and an
// add. A gradient that did not end up in its bucket (a .grad set before the backward, a layout
// autograd would not keep) gets the averages copied back, as with views off.
//
// Per step: begin_backward(), loss.backward() (the hooks fill and launch buckets), then
// end_backward() before the optimizer reads the gradients. Buckets are launched in index order
// on every rank (a collective backend matches collectives by order), a bucket whose gradients
// are all in waiting for the ones before it.
//
// Communication in another dtype (`communication_dtype`, --grad-comm bf16): what DDP's
// bf16_compress_hook does (torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py): each
// bucket's gradients are cast to a buffer of that dtype, divided by the world size and summed
// over the ranks in it, and the result is copied back into the bucket. The buffers are made once,
// with the buckets (a CUDA graph capture allocates nothing), and the hook casts each gradient
// straight into its place there: the bucket itself is written only by the copy back, where DDP
// fills it and then casts it. A bucket already in that dtype is all-reduced in place, as the
// hook's cast of it is the bucket itself.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "distributed/process_group.h"
#include "fused_adamw.h"

namespace gpuscope::workloads {

inline constexpr int64_t kDefaultBucketCapBytes = 25ll << 20;  // DDP's bucket_cap_mb = 25

// Communication over the steps recorded (start_recording .. the last end_backward).
struct CommStats {
  int64_t steps = 0;
  // Device time of the all-reduces, summed (NCCL with timing, or the copy-engine all-reduce
  // outside a CUDA graph capture; nullopt on the CPU).
  std::optional<double> collective_seconds;
  // From the end of the backward's compute to the averaged gradients being back in place: the
  // communication the backward did not hide, plus the copy back (CUDA events on the compute
  // stream; on the CPU the host's wait). With end_backward's on_bucket_done, what it ran for the
  // buckets before the last (an optimizer's steps) falls inside that span, while the last
  // all-reduces went on: its own time is taken out (timed around each call).
  double exposed_seconds = 0;
};

class GradientBuckets {
 public:
  // Registers a gradient hook on every parameter that requires a gradient (duplicates once).
  // REQUIRES: params on one device; `group` outlives this object.
  // `gradients_as_views` false: the averages are copied back into the gradients every step.
  // `communication_dtype`: floating-point buckets of another dtype are all-reduced in a buffer of
  // this one (nullopt: every bucket in place, in its own dtype).
  // `copy_engine`: the all-reduces run through the GPUs' copy engines between peer-mapped
  // buffers (peer_all_reduce.h; CUDA, every rank on one host), not through the group's backend.
  // `sharded` (with copy_engine): the optimizer is sharded (ZeRO stage 1). The parameters move
  // into peer-mapped buffers laid out as their buckets; each rank averages its chunk of a bucket,
  // updates that chunk of the parameters itself (set_shard_update) and sends it to the others.
  // After end_backward every rank holds the updated parameters; a gradient is then the average
  // in this rank's chunk only (the rest of it is this rank's own), so nothing may read it.
  GradientBuckets(const std::vector<at::Tensor>& params, ProcessGroup& group,
                  int64_t bucket_cap_bytes = kDefaultBucketCapBytes, bool gradients_as_views = true,
                  std::optional<at::ScalarType> communication_dtype = std::nullopt,
                  bool copy_engine = false, bool sharded = false);
  ~GradientBuckets();
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // Gradients that are views of their buckets from an earlier step are dropped (set to none):
  // after end_backward every gradient holds this backward's average only, as without views.
  // Host work only (no device work): may run inside a CUDA graph capture.
  void begin_backward();
  // Launches what the hooks did not (parameters without a gradient this step contribute zeros),
  // waits for every bucket (the current stream waits, on CUDA) and makes the averages the
  // gradients: views of the buckets where possible, else copied into them (defining those that
  // were not). Nothing blocks the host on CUDA: a step may be captured in a CUDA graph.
  // `on_bucket_done(i)`, when given, is called for each bucket in index order as soon as its
  // members' gradients are the averages (on CUDA: what it queues on the current stream runs
  // after the wait for bucket i's all-reduce, while later buckets' may still run): an optimizer
  // may step those parameters there.
  // Throws c10::Error when a collective failed or timed out (a rank died). On CUDA, when no
  // step gets this far for the group's timeout (a captured step's NCCL collectives and the copy
  // engines' waits time out nowhere else), a StallWatchdog (stall_watchdog.h) ends the process
  // with a collective_timeout error line (exit 6).
  using BucketDone = std::function<void(size_t bucket)>;
  void end_backward(const BucketDone& on_bucket_done = {});

  size_t bucket_count() const;

  bool sharded() const;
  // Sharded: this rank's chunk of each bucket (`elements` of the bucket's dtype), what its
  // optimizer keeps state for; empty when not sharded.
  std::vector<ShardedAdamW::Shard> shards() const;
  // Sharded: called once a step for each bucket, as soon as this rank's chunk of its gradients
  // is the average: update that chunk of the parameters. `params` and `grads` are flat views of
  // the chunk (Shard's elements); what it queues on the current stream (the all-reduce's, not
  // the backward's) runs before the chunk is sent to the other ranks. Called from the backward's
  // gradient hooks and from end_backward; set before the first begin_backward.
  using ShardUpdate =
      std::function<void(size_t bucket, const at::Tensor& params, const at::Tensor& grads)>;
  void set_shard_update(ShardUpdate update);
  // Device memory this object allocated outside LibTorch's allocator (the copy-engine
  // all-reduce's buffers, sharded also the parameters); 0 otherwise.
  int64_t own_allocation_bytes() const;
  // Bucket i's flat buffer: the averages (the all-reduce averages it in place, or its
  // communication buffer, copied back).
  const at::Tensor& bucket_buffer(size_t i) const;
  // What bucket i's all-reduce runs over: its buffer in the communication dtype (as many
  // elements as the bucket's), or the bucket buffer itself.
  const at::Tensor& communication_buffer(size_t i) const;
  // Parameters whose averages the last end_backward copied into a gradient of their own (with
  // views, 0 unless a gradient could not be a view of its bucket).
  size_t last_copied_back() const;
  // The parameters of bucket i, as indices into the constructor's `params`, in the order their
  // gradients are expected (last parameter first).
  std::vector<size_t> bucket_members(size_t i) const;

  // Steps from now on are timed (CommStats). REQUIRES: no step in progress.
  void start_recording();
  // REQUIRES: the device has been synchronized after the last recorded step.
  CommStats recorded() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscope::workloads
