#include "gpuscope/interconnect.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>

#include "capability/cuda_raii.h"
#include "capability/nccl_library.h"
#include "cuda/cuda_error.h"

namespace gpuscope::capability {
namespace {

using Clock = std::chrono::steady_clock;
using detail::NcclComm;
using detail::NcclLibrary;

constexpr int kWarmup = 5;
constexpr int kPeerRepeats = 10;

// One device's part: its buffer and stream (created with the device current).
struct DeviceSide {
  int ordinal = 0;
  float* buffer = nullptr;
  detail::Stream stream;
};

struct Devices {
  std::vector<DeviceSide> sides;
  ~Devices() {
    for (DeviceSide& s : sides) {
      if (s.buffer != nullptr) {
        cudaSetDevice(s.ordinal);
        detail::report_release_error("a device buffer", cudaFree(s.buffer));
      }
    }
  }
};

Status synchronize_all(const Devices& devices) {
  for (const DeviceSide& s : devices.sides) {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaSetDevice(s.ordinal)));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamSynchronize(s.stream.get())));
  }
  return Status{};
}

// Iterations for a size: enough to time (~1 s at the expected rates), few for large buffers.
int iterations_for(std::uint64_t bytes) {
  const std::uint64_t target = 8ull << 30;
  return static_cast<int>(std::clamp<std::uint64_t>(target / bytes, 10, 200));
}

Status measure_all_reduce(const NcclLibrary& nccl, Devices& devices,
                          const InterconnectOptions& options, InterconnectResult& result) {
  const int count = static_cast<int>(devices.sides.size());
  std::vector<NcclComm> comms(static_cast<size_t>(count), nullptr);
  GPUSCOPE_RETURN_IF_ERROR(nccl.init_all(count, comms.data()));
  struct Comms {
    const NcclLibrary& nccl;
    std::vector<NcclComm>& comms;
    ~Comms() {
      for (NcclComm c : comms) {
        if (c != nullptr) nccl.destroy(c);
      }
    }
  } owner{nccl, comms};
  std::vector<float*> buffers;
  std::vector<cudaStream_t> streams;
  for (const DeviceSide& s : devices.sides) {
    buffers.push_back(s.buffer);
    streams.push_back(s.stream.get());
  }
  for (std::uint64_t bytes = options.min_bytes; bytes <= options.max_bytes;
       bytes *= static_cast<std::uint64_t>(options.size_factor)) {
    const std::size_t elements = bytes / sizeof(float);
    for (int i = 0; i < kWarmup; ++i) {
      GPUSCOPE_RETURN_IF_ERROR(
          nccl.all_reduce_group(count, comms.data(), buffers.data(), elements, streams.data()));
    }
    GPUSCOPE_RETURN_IF_ERROR(synchronize_all(devices));
    const int iterations = iterations_for(bytes);
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      GPUSCOPE_RETURN_IF_ERROR(
          nccl.all_reduce_group(count, comms.data(), buffers.data(), elements, streams.data()));
    }
    GPUSCOPE_RETURN_IF_ERROR(synchronize_all(devices));
    AllReduceResult row;
    row.gpus = count;
    row.bytes = bytes;
    row.iterations = iterations;
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count() / iterations;
    row.algorithm_bandwidth = static_cast<double>(bytes) / row.seconds;
    row.bus_bandwidth = all_reduce_bus_bandwidth(row.algorithm_bandwidth, count);
    if (options.on_all_reduce) options.on_all_reduce(row);
    result.all_reduce.push_back(row);
  }
  return Status{};
}

Result<PeerCopyResult> measure_peer_copy(Devices& devices, int source, int destination,
                                         std::uint64_t bytes) {
  PeerCopyResult row;
  row.source = source;
  row.destination = destination;
  row.bytes = bytes;
  int can = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaDeviceCanAccessPeer(&can, source, destination)));
  row.peer_access = can != 0;
  DeviceSide& from = devices.sides[static_cast<size_t>(source)];
  const DeviceSide& to = devices.sides[static_cast<size_t>(destination)];
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaSetDevice(source)));
  if (row.peer_access) {
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(destination, 0);
    if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();  // "already enabled" is not sticky: clear it
    } else {
      GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(enabled));
    }
  }
  GPUSCOPE_ASSIGN_OR_RETURN(detail::Event begin, detail::make_event());
  GPUSCOPE_ASSIGN_OR_RETURN(detail::Event end, detail::make_event());
  std::vector<double> seconds;
  for (int i = 0; i < kPeerRepeats + 1; ++i) {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(begin.get(), from.stream.get())));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyPeerAsync(
        to.buffer, destination, from.buffer, source, bytes, from.stream.get())));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(end.get(), from.stream.get())));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventSynchronize(end.get())));
    float ms = 0;
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get())));
    if (i > 0) seconds.push_back(static_cast<double>(ms) * 1e-3);  // the first one warms up
  }
  std::sort(seconds.begin(), seconds.end());
  row.seconds = seconds[seconds.size() / 2];
  row.bandwidth = static_cast<double>(bytes) / row.seconds;
  return row;
}

}  // namespace

double all_reduce_bus_bandwidth(double algbw, int gpus) {
  if (gpus < 2) return 0;
  return algbw * 2.0 * (gpus - 1) / gpus;
}

Result<InterconnectResult> measure_interconnect(const InterconnectOptions& options) {
  if (options.min_bytes < sizeof(float) || options.max_bytes < options.min_bytes ||
      options.size_factor < 2 || options.peer_copy_bytes < 1) {
    return Status(Code::invalid_argument, "interconnect: need 4 <= min <= max and factor >= 2");
  }
  int count = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaGetDeviceCount(&count)));
  if (count < 2) {
    return Status(Code::no_device, "interconnect: " + std::to_string(count) +
                                       " CUDA device(s) visible, at least 2 are needed");
  }
  const std::uint64_t buffer_bytes = std::max(options.max_bytes, options.peer_copy_bytes);
  Devices devices;
  for (int d = 0; d < count; ++d) {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaSetDevice(d)));
    DeviceSide side;
    side.ordinal = d;
    const cudaError_t allocated = cudaMalloc(reinterpret_cast<void**>(&side.buffer), buffer_bytes);
    if (allocated == cudaErrorMemoryAllocation) {
      return Status(Code::out_of_memory,
                    "interconnect: no room for the buffer on device " + std::to_string(d));
    }
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(allocated));
    devices.sides.push_back(std::move(side));
    GPUSCOPE_RETURN_IF_ERROR(
        GPUSCOPE_API_CHECK(cudaMemset(devices.sides.back().buffer, 0, buffer_bytes)));
    GPUSCOPE_ASSIGN_OR_RETURN(devices.sides.back().stream, detail::make_stream());
  }

  InterconnectResult result;
  auto nccl = NcclLibrary::load();
  if (!nccl.ok()) {
    result.all_reduce_status = nccl.status();
  } else {
    result.nccl_version = nccl.value()->version();
    if (Status s = measure_all_reduce(*nccl.value(), devices, options, result); !s.ok()) {
      result.all_reduce_status = s;
    }
  }
  for (int s = 0; s < count; ++s) {
    for (int d = 0; d < count; ++d) {
      if (s == d) continue;
      GPUSCOPE_ASSIGN_OR_RETURN(PeerCopyResult row,
                                measure_peer_copy(devices, s, d, options.peer_copy_bytes));
      if (options.on_peer_copy) options.on_peer_copy(row);
      result.peer_copies.push_back(row);
    }
  }
  return result;
}

}  // namespace gpuscope::capability
