// What the links between the GPUs of one host deliver: NCCL all-reduce bus bandwidth over a
// range of sizes (as nccl-tests reports it) and peer-to-peer copy bandwidth for every ordered
// pair of GPUs. Runs in one process that sees every GPU taking part (burn's worker with
// `--interconnect`). Units: bytes, seconds, bytes per second.
//
// NCCL is loaded at run time (dlopen "libnccl.so.2", or $GPUSCOPE_NCCL_LIBRARY): a build needs
// neither its header nor its library, and a machine without it skips the all-reduce rows
// (not_supported) and still measures peer copies.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::capability {

struct AllReduceResult {
  int gpus = 0;
  std::uint64_t bytes = 0;  // the buffer each GPU reduces (float32 sum)
  int iterations = 0;
  double seconds = 0;  // per all-reduce, the mean over the timed iterations
  // algbw = bytes / seconds; busbw = algbw * 2(n-1)/n: what each link carried, comparable
  // across GPU counts (nccl-tests' definition for all-reduce).
  double algorithm_bandwidth = 0;
  double bus_bandwidth = 0;
};

struct PeerCopyResult {
  int source = 0;  // CUDA device ordinals in this process
  int destination = 0;
  bool peer_access = false;  // direct (cudaDeviceCanAccessPeer); else staged by the driver
  std::uint64_t bytes = 0;
  double seconds = 0;    // per copy, the median of the repeats
  double bandwidth = 0;  // bytes / seconds
};

struct InterconnectOptions {
  std::uint64_t min_bytes = 1ull << 20;  // all-reduce sizes: min, min*factor, ... <= max
  std::uint64_t max_bytes = 1ull << 30;
  int size_factor = 2;
  std::uint64_t peer_copy_bytes = 256ull << 20;
  std::function<void(const AllReduceResult&)> on_all_reduce;  // each row as it is measured
  std::function<void(const PeerCopyResult&)> on_peer_copy;
};

struct InterconnectResult {
  std::optional<std::string> nccl_version;  // "2.27.5"; absent when NCCL was not loaded
  std::vector<AllReduceResult> all_reduce;
  std::optional<Status> all_reduce_status;  // why there are no all-reduce rows
  std::vector<PeerCopyResult> peer_copies;
};

// busbw for an all-reduce among `gpus` GPUs with algorithm bandwidth `algbw`.
double all_reduce_bus_bandwidth(double algbw, int gpus);

// Measures every visible CUDA device together. Fails with no_device when fewer than two are
// visible; a missing NCCL is all_reduce_status (not_supported), not a failure.
Result<InterconnectResult> measure_interconnect(const InterconnectOptions& options);

}  // namespace gpuscope::capability
