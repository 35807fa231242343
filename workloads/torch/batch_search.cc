#include "batch_search.h"

#include <algorithm>

namespace gpuscope::workloads {
namespace {

// Largest candidate in (low, high) on the search's grid, or `low` when there is none.
int64_t midpoint(int64_t low, int64_t high, int64_t multiple) {
  int64_t mid = low + (high - low) / 2;
  if (mid >= multiple) mid -= mid % multiple;
  return mid > low ? mid : low;
}

}  // namespace

BatchSearchResult find_largest_batch(const BatchProbe& probe, const BatchSearchOptions& options) {
  BatchSearchResult result;
  // Returns true when it fits; sets `stop` on a probe failure.
  bool stop = false;
  auto attempt = [&](int64_t batch) {
    ProbeResult r = probe(batch);
    result.tries.push_back({batch, r.outcome, r.message});
    if (r.outcome == ProbeOutcome::failed) {
      stop = true;
      result.failure = "batch " + std::to_string(batch) + " failed: " + r.message;
    }
    return r.outcome == ProbeOutcome::fits;
  };

  int64_t low = 0;   // largest batch known to fit (0: none yet)
  int64_t high = 0;  // smallest batch known not to fit (0: none yet)
  int64_t batch = std::min(options.start, options.max);
  if (attempt(batch)) {
    low = batch;
    while (low < options.max) {
      batch = std::min(low * 2, options.max);
      if (attempt(batch)) {
        low = batch;
      } else {
        high = batch;
        break;
      }
    }
  } else {
    high = batch;
    while (!stop && high > 1) {
      batch = high / 2;
      if (attempt(batch)) {
        low = batch;
        break;
      }
      high = batch;
    }
  }
  if (stop) return result;
  if (low == 0) {
    result.failure = "even batch 1 does not fit in device memory";
    return result;
  }
  while (high != 0 && !stop) {
    const int64_t mid = midpoint(low, high, options.multiple);
    if (mid == low) break;
    if (attempt(mid)) {
      low = mid;
    } else {
      high = mid;
    }
  }
  if (stop) return result;
  result.batch = low;
  return result;
}

}  // namespace gpuscope::workloads
