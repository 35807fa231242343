// Copies staged host batches (host_loader.h) into the fixed device batches the steps read, the
// way a PyTorch loop calls .to(device, non_blocking=...). The CUDA calls of the input path live
// here (streams, events).
//
// non_blocking on (CUDA): each copy runs on a copy stream of its own, after the last step that
// read the same device batch (an event), and the compute stream waits for the copy (another
// event): with two or more device batches in turn, the copy for step s+1 overlaps step s. The
// slot is recycled once its copy has finished, seen without blocking at later calls, or waited
// for when more than `max_in_flight` copies are pending.
// non_blocking off, or a CPU device: the copy runs on the compute stream and the host waits for
// it (PyTorch's blocking .to(): it also waits for every step queued before); the slot is
// recycled at once.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "device.h"
#include "input/host_loader.h"
#include "synthetic_data.h"

namespace gpuscope::workloads {

class HostToDevice {
 public:
  // `buffers`: how many device batches are used in turn. `recycle` is called, on the caller's
  // thread, with each slot whose copy finished.
  HostToDevice(const DeviceInfo& device, bool non_blocking, size_t buffers, size_t max_in_flight,
               std::function<void(HostSlot*)> recycle);
  // Waits for the pending copies and recycles their slots.
  ~HostToDevice();
  HostToDevice(const HostToDevice&) = delete;
  HostToDevice& operator=(const HostToDevice&) = delete;

  // Queues the copy of `slot` into `to` (device batch number `buffer`) and orders the current
  // stream after it. REQUIRES: the current stream is the one the steps run on.
  void stage(HostSlot* slot, Batch& to, size_t buffer);
  // Marks that the step reading device batch `buffer` has been queued on the current stream.
  void step_queued(size_t buffer);
  // Waits for every pending copy and recycles its slot.
  void drain();

  int64_t bytes_copied() const { return bytes_; }

 private:
  struct Impl;
  DeviceInfo device_;
  bool non_blocking_;
  size_t max_in_flight_;
  std::function<void(HostSlot*)> recycle_;
  int64_t bytes_ = 0;
  std::unique_ptr<Impl> impl_;  // CUDA with non_blocking only
};

}  // namespace gpuscope::workloads
