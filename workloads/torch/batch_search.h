// The batch-size search behind `--batch auto`: the largest batch whose step fits in device
// memory, found by doubling and then bisecting, with each try's out-of-memory error recovered
// by the probe. Pure logic: the probe is a function, so tests simulate out-of-memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::workloads {

enum class ProbeOutcome { fits, out_of_memory, failed };

struct ProbeResult {
  ProbeOutcome outcome = ProbeOutcome::fits;
  std::string message;  // why, when not `fits`
};

// Runs a step (or a forward) at `batch` and reports whether it fit. After `out_of_memory` the
// device must be usable again (the probe frees what it allocated).
using BatchProbe = std::function<ProbeResult(int64_t batch)>;

struct BatchSearchOptions {
  int64_t start = 32;    // first batch tried
  int64_t max = 8192;    // never tries more
  int64_t multiple = 8;  // the result is a multiple of this when at least this large
};

struct BatchTry {
  int64_t batch = 0;
  ProbeOutcome outcome = ProbeOutcome::fits;
  std::string message;
};

struct BatchSearchResult {
  std::optional<int64_t> batch;  // nullopt when not even batch 1 fits, or a probe failed
  std::vector<BatchTry> tries;   // in the order tried
  std::string failure;           // why there is no batch
};

// REQUIRES: options.start >= 1, options.max >= 1, options.multiple >= 1.
// A probe that returns `failed` (anything but out-of-memory) ends the search with no batch.
BatchSearchResult find_largest_batch(const BatchProbe& probe, const BatchSearchOptions& options);

}  // namespace gpuscope::workloads
