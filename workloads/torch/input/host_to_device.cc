#include "input/host_to_device.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>

namespace gpuscope::workloads {

struct HostToDevice::Impl {
  struct Pending {
    HostSlot* slot;
    std::shared_ptr<at::cuda::CUDAEvent> copied;
  };
  Impl(c10::cuda::CUDAStream copy, size_t buffers) : copy_stream(copy), released(buffers) {}

  c10::cuda::CUDAStream copy_stream;
  std::vector<at::cuda::CUDAEvent> released;  // per device batch: its last reader was queued
  std::deque<Pending> pending;
};

HostToDevice::HostToDevice(const DeviceInfo& device, bool non_blocking, size_t buffers,
                           size_t max_in_flight, std::function<void(HostSlot*)> recycle)
    : device_(device),
      non_blocking_(non_blocking && device.is_cuda()),
      max_in_flight_(std::max<size_t>(max_in_flight, 1)),
      recycle_(std::move(recycle)) {
  if (non_blocking_) {
    impl_ = std::make_unique<Impl>(
        c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.device.index()), buffers);
  }
}

HostToDevice::~HostToDevice() {
  try {
    drain();
  } catch (const std::exception&) {
    // A failed device: its error was reported where it happened; nothing is left to wait for.
  }
}

void HostToDevice::stage(HostSlot* slot, Batch& to, size_t buffer) {
  bytes_ += slot->input.nbytes() + slot->target.nbytes();
  if (!impl_) {
    to.input.copy_(slot->input, /*non_blocking=*/false);
    to.target.copy_(slot->target, /*non_blocking=*/false);
    recycle_(slot);
    return;
  }
  const c10::cuda::CUDAStream compute = c10::cuda::getCurrentCUDAStream(device_.device.index());
  auto copied = std::make_shared<at::cuda::CUDAEvent>();
  {
    c10::cuda::CUDAStreamGuard on_copy_stream(impl_->copy_stream);
    // Never overwrite a device batch that a queued step still reads. (An event never recorded
    // makes block() a no-op.)
    impl_->released.at(buffer).block(impl_->copy_stream);
    to.input.copy_(slot->input, /*non_blocking=*/true);
    to.target.copy_(slot->target, /*non_blocking=*/true);
    copied->record(impl_->copy_stream);
  }
  copied->block(compute);
  impl_->pending.push_back({slot, std::move(copied)});
  while (!impl_->pending.empty() && impl_->pending.front().copied->query()) {
    recycle_(impl_->pending.front().slot);
    impl_->pending.pop_front();
  }
  while (impl_->pending.size() > max_in_flight_) {
    impl_->pending.front().copied->synchronize();
    recycle_(impl_->pending.front().slot);
    impl_->pending.pop_front();
  }
}

void HostToDevice::step_queued(size_t buffer) {
  if (!impl_) return;
  impl_->released.at(buffer).record(c10::cuda::getCurrentCUDAStream(device_.device.index()));
}

void HostToDevice::drain() {
  if (!impl_) return;
  while (!impl_->pending.empty()) {
    impl_->pending.front().copied->synchronize();
    recycle_(impl_->pending.front().slot);
    impl_->pending.pop_front();
  }
}

}  // namespace gpuscope::workloads
