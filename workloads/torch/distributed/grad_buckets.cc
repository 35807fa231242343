#include "distributed/grad_buckets.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <unordered_set>

#include "distributed/peer_all_reduce.h"
#include "distributed/stall_watchdog.h"

namespace gpuscope::workloads {
namespace {

struct Slot {
  at::Tensor param;
  size_t source = 0;  // index in the list the constructor was given
  size_t bucket = 0;
  at::Tensor view;     // the parameter's place in its bucket, laid out as the parameter
  int64_t offset = 0;  // of the view in its bucket, in elements
  // Where the hook puts the gradient: `view`, or its place in the bucket's communication buffer
  // (same offset and layout, another dtype).
  at::Tensor landing;
  bool ready = false;
  // This step the hook hands autograd a view of the bucket to keep as .grad (views on and no
  // gradient defined before the backward; else autograd would add into the defined one).
  bool give_view = false;
};

struct Bucket {
  at::Tensor buffer;
  // The all-reduce's buffer in the communication dtype, copied back into `buffer` after it;
  // undefined when the all-reduce runs on `buffer` itself.
  at::Tensor communication;
  // Sharded: the parameters, laid out as `buffer` (each parameter's data a view of it).
  at::Tensor params;
  std::vector<size_t> members;
  size_t pending = 0;  // members whose gradient has not arrived this step
  std::optional<PendingCollective> reduce;
};

// Each view starts at a multiple of this many elements of its bucket: the views are the
// gradients that the fused optimizer and the loss scaler's foreach kernels read, whose vectorized
// loads need aligned addresses (a gradient of its own was a 512-byte aligned allocation). The
// padding stays zero: nothing writes it, and the average of zeros is zero.
constexpr int64_t kViewAlignment = 64;

int64_t aligned(int64_t elements) {
  return (elements + kViewAlignment - 1) / kViewAlignment * kViewAlignment;
}

at::Tensor view_in(const at::Tensor& buffer, const at::Tensor& param, int64_t offset) {
  if (param.is_non_overlapping_and_dense()) {
    return buffer.as_strided(param.sizes(), param.strides(), offset);
  }
  return buffer.narrow(0, offset, param.numel()).view(param.sizes());
}

}  // namespace

struct GradientBuckets::Impl {
  // First, so that it is destroyed last (it watches the all-reduce's own final wait). On CUDA:
  // a captured step's NCCL collectives are replays that NCCL's watchdog does not see, and the
  // copy engines' waits have no timeout at all.
  std::unique_ptr<StallWatchdog> watchdog;
  ProcessGroup* group = nullptr;
  // --all-reduce copy-engine: the buckets' all-reduces, in place of the group's backend.
  std::unique_ptr<PeerAllReduce> peer;
  bool sharded = false;
  ShardUpdate shard_update;
  std::vector<Slot> slots;
  std::vector<Bucket> buckets;
  size_t next_launch = 0;  // buckets launch in index order
  bool cuda = false;
  bool gradients_as_views = true;
  size_t last_copied_back = 0;

  bool recording = false;
  int64_t steps = 0;
  double exposed_host_seconds = 0;
  std::deque<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> exposed_events;
  // The spans of what on_bucket_done queued inside the exposed span (its calls for the buckets
  // before the last): work, not a wait for the communication, taken out of it.
  std::deque<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> callback_events;
  std::vector<PendingCollective> recorded_collectives;

  // The gradient hook: returns the tensor autograd should accumulate instead of `grad`, or an
  // undefined tensor to leave it.
  at::Tensor on_gradient(size_t index, const at::Tensor& grad) {
    Slot& slot = slots[index];
    // Autograd sums a leaf's gradients before its hook: a second call is a second backward in
    // one step, which DDP refuses too (here it would add into a bucket being reduced).
    TORCH_CHECK(!slot.ready,
                "GradientBuckets: a second gradient for one parameter in one step (one backward "
                "between begin_backward and end_backward)");
    slot.landing.copy_(grad);  // a cast too, into a communication buffer
    slot.ready = true;
    at::Tensor kept;
    if (slot.give_view) {
      // A tensor of its own over the same bucket memory: autograd steals a gradient only when
      // nothing else holds it, and slot.view is held here.
      kept = view_in(buckets[slot.bucket].buffer, slot.param, slot.offset);
    }
    Bucket& bucket = buckets[slot.bucket];
    if (--bucket.pending == 0) launch_ready();
    return kept;
  }

  // Whether the parameter's gradient is its bucket view itself (same memory, same layout).
  static bool is_bucket_view(const Slot& slot) {
    const at::Tensor& grad = slot.param.grad();
    return grad.defined() && grad.data_ptr() == slot.view.data_ptr() &&
           grad.sizes() == slot.view.sizes() && grad.strides() == slot.view.strides();
  }

  // The averages become the gradients of the bucket's parameters: they are where the gradients
  // are views of the bucket; the others get them in one multi-tensor copy (a few kernels, not one
  // per parameter: this is on the step's critical path). A parameter without a gradient this step
  // gets its view (or, views off, a copy).
  void make_gradients(const Bucket& bucket) {
    std::vector<at::Tensor> grads, views;
    for (const size_t m : bucket.members) {
      Slot& slot = slots[m];
      if (is_bucket_view(slot)) continue;
      at::Tensor& grad = slot.param.mutable_grad();
      if (grad.defined()) {
        grads.push_back(grad);
        views.push_back(slot.view);
      } else if (gradients_as_views) {
        grad = view_in(bucket.buffer, slot.param, slot.offset);
      } else {
        grad = slot.view.clone(at::MemoryFormat::Preserve);
      }
    }
    last_copied_back += grads.size();
    if (!grads.empty()) at::_foreach_copy_(grads, views);
  }

  // Sharded: the optimizer's update of this rank's chunk of bucket b, on the all-reduce's stream.
  void update_shard(size_t b, const ChunkRange& chunk) {
    if (chunk.count == 0) return;
    Bucket& bucket = buckets[b];
    at::Tensor grads = bucket.buffer.narrow(0, chunk.begin, chunk.count);
    if (bucket.communication.defined()) {
      grads.copy_(bucket.communication.narrow(0, chunk.begin, chunk.count));
    }
    shard_update(b, bucket.params.narrow(0, chunk.begin, chunk.count), grads);
  }

  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      Bucket& bucket = buckets[next_launch++];
      const size_t b = next_launch - 1;
      if (sharded) {  // the peer buffers: the buckets' reduced ones, then their parameters
        peer->launch_sharded(b, buckets.size() + b,
                             [this, b](const ChunkRange& chunk) { update_shard(b, chunk); });
        continue;
      }
      if (peer) {
        peer->launch_average(b);  // its buffer i is the bucket's reduced one
        continue;
      }
      // The communication buffer as bf16_compress_hook's all-reduce has it: gradients cast,
      // divided by the world size, summed (all_reduce_average: Gloo divides first; NCCL's
      // average scales the inputs inside the collective).
      at::Tensor& reduced = bucket.communication.defined() ? bucket.communication : bucket.buffer;
      bucket.reduce.emplace(group->all_reduce_average(reduced));
    }
  }
};

GradientBuckets::GradientBuckets(const std::vector<at::Tensor>& params, ProcessGroup& group,
                                 int64_t bucket_cap_bytes, bool gradients_as_views,
                                 std::optional<at::ScalarType> communication_dtype,
                                 bool copy_engine, bool sharded)
    : impl_(std::make_unique<Impl>()) {
  TORCH_CHECK(!sharded || copy_engine,
              "GradientBuckets: a sharded optimizer needs the copy-engine all-reduce");
  impl_->group = &group;
  impl_->sharded = sharded;
  impl_->gradients_as_views = gradients_as_views;
  std::unordered_set<const void*> seen;
  std::vector<at::Tensor> unique;
  std::vector<size_t> source;
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& p = params[i];
    if (!p.requires_grad() || !seen.insert(p.unsafeGetTensorImpl()).second) continue;
    unique.push_back(p);
    source.push_back(i);
  }
  TORCH_CHECK(!unique.empty(), "GradientBuckets: no parameter requires a gradient");
  impl_->cuda = unique.front().is_cuda();
  // Reverse order: the backward produces the last layers' gradients first.
  struct Open {
    at::ScalarType dtype;
    std::vector<size_t> members;
    int64_t bytes = 0;
  };
  std::vector<Open> closed;
  std::vector<Open> open;  // one open bucket per dtype
  for (size_t k = unique.size(); k-- > 0;) {
    const at::Tensor& p = unique[k];
    impl_->slots.push_back(Slot{p, source[k], 0, {}, 0, {}, false, false});
    const size_t index = impl_->slots.size() - 1;
    auto it = std::find_if(open.begin(), open.end(),
                           [&](const Open& o) { return o.dtype == p.scalar_type(); });
    if (it == open.end()) {
      open.push_back(Open{p.scalar_type(), {}, 0});
      it = open.end() - 1;
    }
    it->members.push_back(index);
    it->bytes += p.numel() * static_cast<int64_t>(p.element_size());
    if (it->bytes >= bucket_cap_bytes) {
      closed.push_back(std::move(*it));
      open.erase(it);
    }
  }
  for (Open& o : open) closed.push_back(std::move(o));
  // Each bucket's size, and the dtype its all-reduce runs in.
  std::vector<PeerAllReduce::BufferSpec> reduced;
  for (const Open& o : closed) {
    int64_t elements = 0;
    for (const size_t m : o.members) elements += aligned(impl_->slots[m].param.numel());
    const bool cast =
        communication_dtype && *communication_dtype != o.dtype && at::isFloatingType(o.dtype);
    reduced.push_back(PeerAllReduce::BufferSpec{elements, cast ? *communication_dtype : o.dtype});
  }
  if (copy_engine) {
    std::vector<PeerAllReduce::BufferSpec> peer_buffers = reduced;
    if (sharded) {  // each bucket's parameters, after the reduced buffers
      for (size_t k = 0; k < closed.size(); ++k) {
        peer_buffers.push_back(PeerAllReduce::BufferSpec{reduced[k].elements, closed[k].dtype,
                                                         /*reduced=*/false});
      }
    }
    impl_->peer = std::make_unique<PeerAllReduce>(group, peer_buffers, unique.front().device(),
                                                  group.time_collectives());
  }
  for (size_t k = 0; k < closed.size(); ++k) {
    const Open& o = closed[k];
    Bucket bucket;
    const int64_t elements = reduced[k].elements;
    const bool cast = reduced[k].dtype != o.dtype;
    const at::TensorOptions options = impl_->slots[o.members.front()].param.options();
    // The all-reduced buffer lives where the copy-engine all-reduce's peers can reach it.
    const auto make = [&](at::ScalarType dtype, bool all_reduced) {
      return impl_->peer && all_reduced ? impl_->peer->buffer(k)
                                        : at::zeros({elements}, options.dtype(dtype));
    };
    bucket.buffer = make(o.dtype, !cast);
    if (cast) bucket.communication = make(reduced[k].dtype, true);
    if (sharded) bucket.params = impl_->peer->buffer(closed.size() + k);
    int64_t offset = 0;
    for (const size_t m : o.members) {
      Slot& slot = impl_->slots[m];
      slot.bucket = impl_->buckets.size();
      slot.view = view_in(bucket.buffer, slot.param, offset);
      slot.landing = bucket.communication.defined()
                         ? view_in(bucket.communication, slot.param, offset)
                         : slot.view;
      slot.offset = offset;
      offset += aligned(slot.param.numel());
      if (bucket.params.defined()) {  // the parameter's data moves to its place in the bucket
        const at::NoGradGuard no_grad;
        at::Tensor place = view_in(bucket.params, slot.param, slot.offset);
        place.copy_(slot.param);
        slot.param.set_data(place);
      }
    }
    bucket.members = o.members;
    impl_->buckets.push_back(std::move(bucket));
  }
  if (impl_->cuda) {
    const int64_t timeout_s = std::max<int64_t>(
        1, std::chrono::duration_cast<std::chrono::seconds>(group.timeout()).count());
    impl_->watchdog = std::make_unique<StallWatchdog>(
        unique.front().device(), timeout_s,
        "rank " + std::to_string(group.rank()) + ": no training step got past its gradient " +
            "all-reduces in " + std::to_string(timeout_s) +
            " s (--dist-timeout): another rank has stopped or hangs; ending this one");
  }
  for (size_t i = 0; i < impl_->slots.size(); ++i) {
    Impl* impl = impl_.get();
    impl->slots[i].param.register_hook(
        [impl, i](const at::Tensor& grad) { return impl->on_gradient(i, grad); });
  }
}

GradientBuckets::~GradientBuckets() = default;

void GradientBuckets::begin_backward() {
  TORCH_CHECK(!impl_->sharded || impl_->shard_update,
              "GradientBuckets: sharded, but no shard update was set");
  for (Slot& slot : impl_->slots) {
    slot.ready = false;
    // A view left from an earlier step: autograd would add this step's gradient into the very
    // memory the hook copies it to.
    if (Impl::is_bucket_view(slot)) slot.param.mutable_grad().reset();
    slot.give_view = impl_->gradients_as_views && !slot.param.grad().defined();
  }
  for (Bucket& bucket : impl_->buckets) {
    bucket.pending = bucket.members.size();
    bucket.reduce.reset();
  }
  impl_->next_launch = 0;
}

void GradientBuckets::end_backward(const BucketDone& on_bucket_done) {
  Impl& impl = *impl_;
  std::optional<at::cuda::CUDAEvent> compute_done;
  const auto host_start = std::chrono::steady_clock::now();
  if (impl.recording && impl.cuda) {
    compute_done.emplace(cudaEventDefault);
    compute_done->record(c10::cuda::getCurrentCUDAStream());
  }
  for (Slot& slot : impl.slots) {
    if (slot.ready) continue;
    slot.landing.zero_();
    slot.ready = true;
    --impl.buckets[slot.bucket].pending;
  }
  impl.launch_ready();
  impl.last_copied_back = 0;
  std::optional<at::cuda::CUDAEvent> reduced;
  double host_seconds = 0, callback_host_seconds = 0;
  for (size_t b = 0; b < impl.buckets.size(); ++b) {
    Bucket& bucket = impl.buckets[b];
    if (impl.peer) {
      impl.peer->wait(b);
    } else {
      bucket.reduce->wait();
      if (impl.recording) impl.recorded_collectives.push_back(*bucket.reduce);
    }
    // Sharded, the parameters are updated: the gradients stay as they are.
    if (bucket.communication.defined() && !impl.sharded) {
      bucket.buffer.copy_(bucket.communication);
    }
    if (!impl.sharded) impl.make_gradients(bucket);
    // The communication ends with the last bucket's averages in place: what the callbacks queue
    // after that is not communication, what they queued before ran while it went on.
    if (b + 1 == impl.buckets.size() && impl.recording) {
      if (impl.cuda) {
        reduced.emplace(cudaEventDefault);
        reduced->record(c10::cuda::getCurrentCUDAStream());
      } else {
        host_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();
      }
    }
    if (!on_bucket_done) continue;
    if (!impl.recording || b + 1 == impl.buckets.size()) {
      on_bucket_done(b);
    } else if (impl.cuda) {
      at::cuda::CUDAEvent before(cudaEventDefault), after(cudaEventDefault);
      before.record(c10::cuda::getCurrentCUDAStream());
      on_bucket_done(b);
      after.record(c10::cuda::getCurrentCUDAStream());
      impl.callback_events.emplace_back(std::move(before), std::move(after));
    } else {
      const auto before = std::chrono::steady_clock::now();
      on_bucket_done(b);
      callback_host_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
    }
  }
  if (impl.watchdog) impl.watchdog->mark();
  if (!impl.recording) return;
  ++impl.steps;
  if (impl.cuda) {
    impl.exposed_events.emplace_back(std::move(*compute_done), std::move(*reduced));
  } else {
    impl.exposed_host_seconds += host_seconds - callback_host_seconds;
  }
}

size_t GradientBuckets::bucket_count() const {
  return impl_->buckets.size();
}

bool GradientBuckets::sharded() const {
  return impl_->sharded;
}

std::vector<ShardedAdamW::Shard> GradientBuckets::shards() const {
  std::vector<ShardedAdamW::Shard> out;
  if (!impl_->sharded) return out;
  for (size_t b = 0; b < impl_->buckets.size(); ++b) {
    out.push_back(
        ShardedAdamW::Shard{impl_->peer->chunk(b).count, impl_->buckets[b].buffer.scalar_type()});
  }
  return out;
}

void GradientBuckets::set_shard_update(ShardUpdate update) {
  impl_->shard_update = std::move(update);
}

int64_t GradientBuckets::own_allocation_bytes() const {
  return impl_->peer ? impl_->peer->bytes() : 0;
}

const at::Tensor& GradientBuckets::bucket_buffer(size_t i) const {
  return impl_->buckets.at(i).buffer;
}

const at::Tensor& GradientBuckets::communication_buffer(size_t i) const {
  const Bucket& bucket = impl_->buckets.at(i);
  return bucket.communication.defined() ? bucket.communication : bucket.buffer;
}

size_t GradientBuckets::last_copied_back() const {
  return impl_->last_copied_back;
}

std::vector<size_t> GradientBuckets::bucket_members(size_t i) const {
  std::vector<size_t> members;
  for (const size_t m : impl_->buckets.at(i).members) members.push_back(impl_->slots[m].source);
  return members;
}

void GradientBuckets::start_recording() {
  impl_->recording = true;
  impl_->steps = 0;
  impl_->exposed_host_seconds = 0;
  impl_->exposed_events.clear();
  impl_->callback_events.clear();
  impl_->recorded_collectives.clear();
  if (impl_->peer) impl_->peer->start_recording();
}

CommStats GradientBuckets::recorded() const {
  CommStats stats;
  stats.steps = impl_->steps;
  stats.exposed_seconds = impl_->exposed_host_seconds;
  for (const auto& [start, end] : impl_->exposed_events) {
    stats.exposed_seconds += static_cast<double>(start.elapsed_time(end)) * 1e-3;
  }
  for (const auto& [start, end] : impl_->callback_events) {
    stats.exposed_seconds -= static_cast<double>(start.elapsed_time(end)) * 1e-3;
  }
  stats.exposed_seconds = std::max(stats.exposed_seconds, 0.0);
  double total = 0;
  bool any = false;
  for (const PendingCollective& c : impl_->recorded_collectives) {
    if (const auto s = c.device_seconds()) {
      total += *s;
      any = true;
    }
  }
  if (any) stats.collective_seconds = total;
  if (impl_->peer) stats.collective_seconds = impl_->peer->recorded_seconds();
  return stats;
}

}  // namespace gpuscope::workloads
