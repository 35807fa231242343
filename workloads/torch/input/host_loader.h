// Batches produced on the CPU by N loader threads, as PyTorch's DataLoader with num_workers=N:
// each batch goes into a staging slot (host memory laid out like the device batch, pinned or
// pageable), ready slots wait in a bounded queue for the training thread, and a slot is produced
// into again only after the training thread has recycled it (its copy to the device finished).
// With 0 workers the training thread produces each batch itself, inside next().
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "input/bounded_queue.h"

namespace gpuscope::workloads {

// One batch in host memory.
struct HostSlot {
  at::Tensor input;    // images [B, 3, H, W] (dtype and layout of the device batch) or tokens
  at::Tensor target;   // labels [B] or next tokens [B, T], int64
  int64_t index = -1;  // which batch of the stream this is: 0, 1, 2, ...
};

// Fills `slot` with batch number `index`. Called concurrently from the loader threads; must give
// the same batch for the same index whichever thread calls it. May throw: the loader stops and
// next() rethrows.
using BatchProducer = std::function<void(int64_t index, HostSlot& slot)>;
using SlotFactory = std::function<std::unique_ptr<HostSlot>()>;

struct LoaderOptions {
  int64_t workers = 4;           // threads; 0: produced inline by next()
  int64_t prefetch = 2;          // ready batches allowed beyond one per worker
  int64_t held = 1;              // slots the consumer holds at once (taken, not yet recycled)
  std::optional<int64_t> limit;  // batches in all; nullopt: endless
};

struct LoaderStats {
  int64_t produced = 0;        // batches finished by producers
  double produce_seconds = 0;  // producer time summed over threads
};

class HostLoader {
 public:
  // Allocates max(workers, 1) + prefetch + held slots and starts the workers.
  HostLoader(const LoaderOptions& options, const SlotFactory& make_slot, BatchProducer produce);
  // stop().
  ~HostLoader();
  HostLoader(const HostLoader&) = delete;
  HostLoader& operator=(const HostLoader&) = delete;

  // The next ready batch (in the order finished, which with several workers need not be index
  // order), waiting for it; nullptr once the limit is reached or after stop(). Rethrows the
  // first exception a producer threw.
  // REQUIRES: the caller holds fewer than options.held + 1 slots.
  HostSlot* next();
  // Returns a slot taken from next() for reuse.
  // REQUIRES: nothing reads it any more (a copy from it has finished).
  void recycle(HostSlot* slot);
  // Wakes and joins the workers; a worker in the middle of a batch finishes it first. Idempotent.
  void stop();

  size_t slot_count() const { return slots_.size(); }
  size_t ready_count() const { return ready_.size(); }
  LoaderStats stats() const;

 private:
  void work();
  // Produces the next index into `slot`; false when the limit is reached.
  bool produce_next(HostSlot& slot);

  LoaderOptions options_;
  BatchProducer produce_;
  std::vector<std::unique_ptr<HostSlot>> slots_;
  BoundedQueue<HostSlot*> free_;
  BoundedQueue<HostSlot*> ready_;
  std::atomic<int64_t> next_index_{0};
  std::atomic<int64_t> produced_{0};
  std::atomic<int64_t> produce_nanoseconds_{0};
  std::atomic<int64_t> running_workers_{0};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
  bool stopped_ = false;
};

}  // namespace gpuscope::workloads
