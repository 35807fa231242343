#include "distributed/stall_watchdog.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "json_protocol.h"

namespace gpuscope::workloads {

bool StallCounter::stalled(uint64_t progress) {
  if (progress != last_) {
    last_ = progress;
    unchanged_ = 0;
    return false;
  }
  if (progress == 0) return false;  // no step has ended yet
  return ++unchanged_ >= limit_;
}

namespace {

void stall_and_exit(const std::string& message) {
  const std::string line = error_line("collective_timeout", message) + "\n";
  // One write: the line reaches the launcher whole, whatever the main thread is doing.
  (void)!write(STDOUT_FILENO, line.data(), line.size());
  std::fprintf(stderr, "gpuscope-torch: %s\n", message.c_str());
  std::_Exit(kTorchExitFailed);
}

}  // namespace

struct StallWatchdog::Impl {
  c10::DeviceIndex device = 0;
  uint64_t* host = nullptr;  // the counter, in pinned host memory the device writes
  at::Tensor counter;        // the same memory as the device sees it (one int64)
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  std::thread thread;
};

StallWatchdog::StallWatchdog(const c10::Device& device, int64_t timeout_s, std::string what,
                             OnStall on_stall)
    : impl_(std::make_unique<Impl>()) {
  TORCH_CHECK(device.is_cuda() && device.has_index() && timeout_s >= 1,
              "StallWatchdog needs a CUDA device and a timeout");
  Impl& impl = *impl_;
  impl.device = device.index();
  c10::cuda::CUDAGuard guard(impl.device);
  void* host = nullptr;
  TORCH_CHECK(cudaHostAlloc(&host, sizeof(uint64_t), cudaHostAllocMapped) == cudaSuccess,
              "StallWatchdog: cudaHostAlloc failed");
  impl.host = static_cast<uint64_t*>(host);
  *impl.host = 0;
  void* mapped = nullptr;
  if (cudaHostGetDevicePointer(&mapped, host, 0) != cudaSuccess) {
    (void)cudaFreeHost(host);
    TORCH_CHECK(false, "StallWatchdog: cudaHostGetDevicePointer failed");
  }
  impl.counter = at::from_blob(mapped, {1}, at::TensorOptions().device(device).dtype(at::kLong));
  if (!on_stall) on_stall = stall_and_exit;
  impl.thread =
      std::thread([&impl, timeout_s, what = std::move(what), on_stall = std::move(on_stall)] {
        StallCounter counter(timeout_s);
        std::unique_lock lock(impl.mutex);
        while (!impl.wake.wait_for(lock, std::chrono::seconds(1), [&] { return impl.stop; })) {
          const uint64_t progress = __atomic_load_n(impl.host, __ATOMIC_RELAXED);
          if (counter.stalled(progress)) {
            on_stall(what);
            return;
          }
        }
      });
}

StallWatchdog::~StallWatchdog() {
  Impl& impl = *impl_;
  {
    // No queued increment may write freed memory. The thread watches this wait too: a device
    // stuck on a dead peer's flag ends the process instead of hanging here.
    c10::cuda::CUDAGuard guard(impl.device);
    (void)cudaDeviceSynchronize();
  }
  {
    const std::lock_guard lock(impl.mutex);
    impl.stop = true;
  }
  impl.wake.notify_all();
  if (impl.thread.joinable()) impl.thread.join();
  impl.counter = at::Tensor();
  (void)cudaFreeHost(impl.host);
}

void StallWatchdog::mark() {
  impl_->counter.add_(1);
}

}  // namespace gpuscope::workloads
