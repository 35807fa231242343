#include "distributed/grad_buckets.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <unordered_set>

namespace gpuscope::workloads {
namespace {

struct Slot {
  at::Tensor param;
  size_t source = 0;  // index in the list the constructor was given
  size_t bucket = 0;
  at::Tensor view;  // the parameter's place in its bucket, laid out as the parameter
  bool ready = false;
};

struct Bucket {
  at::Tensor buffer;
  std::vector<size_t> members;
  size_t pending = 0;  // members whose gradient has not arrived this step
  std::optional<PendingCollective> reduce;
};

at::Tensor view_in(const at::Tensor& buffer, const at::Tensor& param, int64_t offset) {
  if (param.is_non_overlapping_and_dense()) {
    return buffer.as_strided(param.sizes(), param.strides(), offset);
  }
  return buffer.narrow(0, offset, param.numel()).view(param.sizes());
}

}  // namespace

struct GradientBuckets::Impl {
  ProcessGroup* group = nullptr;
  std::vector<Slot> slots;
  std::vector<Bucket> buckets;
  size_t next_launch = 0;  // buckets launch in index order
  bool cuda = false;

  bool recording = false;
  int64_t steps = 0;
  double exposed_host_seconds = 0;
  std::deque<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> exposed_events;
  std::vector<PendingCollective> recorded_collectives;

  void on_gradient(size_t index, const at::Tensor& grad) {
    Slot& slot = slots[index];
    if (slot.ready) return;  // a second gradient for the same parameter: DDP forbids it too
    slot.view.copy_(grad);
    slot.ready = true;
    Bucket& bucket = buckets[slot.bucket];
    if (--bucket.pending == 0) launch_ready();
  }

  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      Bucket& bucket = buckets[next_launch++];
      bucket.reduce.emplace(group->all_reduce_average(bucket.buffer));
    }
  }
};

GradientBuckets::GradientBuckets(const std::vector<at::Tensor>& params, ProcessGroup& group,
                                 int64_t bucket_cap_bytes)
    : impl_(std::make_unique<Impl>()) {
  impl_->group = &group;
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
    impl_->slots.push_back(Slot{p, source[k], 0, {}, false});
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
  for (const Open& o : closed) {
    Bucket bucket;
    int64_t elements = 0;
    for (const size_t m : o.members) elements += impl_->slots[m].param.numel();
    bucket.buffer = at::zeros({elements}, impl_->slots[o.members.front()].param.options());
    int64_t offset = 0;
    for (const size_t m : o.members) {
      Slot& slot = impl_->slots[m];
      slot.bucket = impl_->buckets.size();
      slot.view = view_in(bucket.buffer, slot.param, offset);
      offset += slot.param.numel();
    }
    bucket.members = o.members;
    impl_->buckets.push_back(std::move(bucket));
  }
  for (size_t i = 0; i < impl_->slots.size(); ++i) {
    Impl* impl = impl_.get();
    impl->slots[i].param.register_hook(
        [impl, i](const at::Tensor& grad) { impl->on_gradient(i, grad); });
  }
}

GradientBuckets::~GradientBuckets() = default;

void GradientBuckets::begin_backward() {
  for (Slot& slot : impl_->slots) slot.ready = false;
  for (Bucket& bucket : impl_->buckets) {
    bucket.pending = bucket.members.size();
    bucket.reduce.reset();
  }
  impl_->next_launch = 0;
}

void GradientBuckets::end_backward() {
  Impl& impl = *impl_;
  std::optional<at::cuda::CUDAEvent> compute_done;
  const auto host_start = std::chrono::steady_clock::now();
  if (impl.recording && impl.cuda) {
    compute_done.emplace(cudaEventDefault);
    compute_done->record(c10::cuda::getCurrentCUDAStream());
  }
  for (Slot& slot : impl.slots) {
    if (slot.ready) continue;
    slot.view.zero_();
    slot.ready = true;
    --impl.buckets[slot.bucket].pending;
  }
  impl.launch_ready();
  for (Bucket& bucket : impl.buckets) {
    bucket.reduce->wait();
    if (impl.recording) impl.recorded_collectives.push_back(*bucket.reduce);
  }
  // The averages back into the gradients: one multi-tensor copy (a few kernels, not one per
  // parameter: this is on the step's critical path).
  std::vector<at::Tensor> grads, views;
  grads.reserve(impl.slots.size());
  views.reserve(impl.slots.size());
  for (Slot& slot : impl.slots) {
    at::Tensor& grad = slot.param.mutable_grad();
    if (grad.defined()) {
      grads.push_back(grad);
      views.push_back(slot.view);
    } else {
      grad = slot.view.clone(at::MemoryFormat::Preserve);
    }
  }
  if (!grads.empty()) at::_foreach_copy_(grads, views);
  if (!impl.recording) return;
  ++impl.steps;
  if (impl.cuda) {
    at::cuda::CUDAEvent reduced(cudaEventDefault);
    reduced.record(c10::cuda::getCurrentCUDAStream());
    impl.exposed_events.emplace_back(std::move(*compute_done), std::move(reduced));
  } else {
    impl.exposed_host_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();
  }
}

size_t GradientBuckets::bucket_count() const {
  return impl_->buckets.size();
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
  impl_->recorded_collectives.clear();
}

CommStats GradientBuckets::recorded() const {
  CommStats stats;
  stats.steps = impl_->steps;
  stats.exposed_seconds = impl_->exposed_host_seconds;
  for (const auto& [start, end] : impl_->exposed_events) {
    stats.exposed_seconds += static_cast<double>(start.elapsed_time(end)) * 1e-3;
  }
  double total = 0;
  bool any = false;
  for (const PendingCollective& c : impl_->recorded_collectives) {
    if (const auto s = c.device_seconds()) {
      total += *s;
      any = true;
    }
  }
  if (any) stats.collective_seconds = total;
  return stats;
}

}  // namespace gpuscope::workloads
