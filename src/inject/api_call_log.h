// The runtime and driver API calls recorded through CUPTI's callback API: the callback (on the
// program's thread, at each recorded call's exit) appends one fixed-size entry; the flusher takes
// them and writes their lines. Why callbacks and not CUPTI's runtime/driver activity kinds: with
// those kinds on, CUPTI timestamps every CUDA call of the process, recorded or not, and PyTorch
// makes about 20 a kernel; callbacks run only for the calls asked for (api_calls.h). Measured on
// the H100: bench/RESULTS.md, session 11.
//
// Bounded: past `max_entries` waiting, calls are counted as dropped, not kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gpuscope::inject {

struct ApiCall {
  uint64_t start = 0;  // the file's clock (ns), at the call's entry
  uint64_t end = 0;    // at its exit
  uint32_t tid = 0;    // kernel thread id, as /proc and NVTX records name threads
  uint32_t correlation = 0;
  uint32_t cbid = 0;    // CUPTI's callback id in its domain
  int32_t result = 0;   // cudaError_t or CUresult
  bool runtime = true;  // runtime API, else driver API
};

class ApiCallLog {
 public:
  explicit ApiCallLog(size_t max_entries) : max_entries_(max_entries) {}

  // False when full (the call is counted as dropped).
  bool push(const ApiCall& call);
  // What waits, oldest first; the log is empty afterwards.
  std::vector<ApiCall> take();
  // A quarter of the bound or more waits: take soon.
  bool wants_draining() const;
  // Calls dropped since the last call of this function.
  uint64_t take_dropped();

 private:
  const size_t max_entries_;
  mutable std::mutex mutex_;
  std::vector<ApiCall> calls_;
  uint64_t dropped_ = 0;
};

}  // namespace gpuscope::inject
