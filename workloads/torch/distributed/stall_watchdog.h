// A timeout for a data-parallel step's gradient all-reduces where nothing else gives one: the
// copy-engine all-reduce (peer_all_reduce.h) has none of its own (a rank whose peer stopped or
// hangs waits on the device for a flag that never comes, holding no SM, raising no error), and
// NCCL's watchdog does not see collectives replayed in a CUDA graph (a 2×H200 job with a
// stopped rank ran on for minutes past --dist-timeout 20, session 17).
//
// The step's stream adds 1 to a counter in host-mapped memory once a step (a one-element kernel,
// captured in a CUDA graph with the step); a host thread reads it once a second. Once the counter
// has moved (the first step ended: the startup, however long, is not watched), `timeout_s` reads
// in a row that see no change are a stall: the thread prints an error line (code
// `collective_timeout`) on stdout, as the rank's other error lines, and ends the process (exit 6),
// so that the launcher (this program's, torchrun) ends the others. It counts reads, not
// wall-clock time: a job stopped as a whole (Ctrl-Z) and resumed later is not a stall.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace gpuscope::workloads {

// The decision, apart from threads and devices (tested on the CPU).
class StallCounter {
 public:
  // REQUIRES: limit >= 1.
  explicit StallCounter(int64_t limit) : limit_(limit) {}
  // One read of the progress counter: true when it has not changed for `limit` reads in a row
  // (this one included) since it first left 0.
  bool stalled(uint64_t progress);

 private:
  int64_t limit_;
  uint64_t last_ = 0;
  int64_t unchanged_ = 0;
};

class StallWatchdog {
 public:
  // Called on the watchdog's thread at a stall; the default prints `message` as an error line
  // and ends the process with exit status 6.
  using OnStall = std::function<void(const std::string& message)>;
  // Starts the thread. `what`: the message at a stall. Throws c10::Error when the host memory
  // cannot be allocated and mapped.
  // REQUIRES: `device` is CUDA; timeout_s >= 1.
  StallWatchdog(const c10::Device& device, int64_t timeout_s, std::string what,
                OnStall on_stall = {});
  // Waits for the device (watched), then stops the thread (within a second) and frees the
  // counter.
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

  // Queues the counter's increment on the current stream: one step has got this far. Host work
  // only: may run inside a CUDA graph capture.
  void mark();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscope::workloads
