// Host <-> device copies: pinned vs pageable host memory, each direction and both at once,
// over sizes from min_bytes to max_bytes.
//
// Pinned copies are timed with CUDA events around cudaMemcpyAsync (the transfer itself).
// Pageable copies are synchronous for the calling thread (the driver stages them through its
// own pinned buffers), so they are timed with the host clock from the call to the stream's
// synchronization: what a program waits. Both at once: H2D on one stream and D2H on another,
// started together; for pageable memory from two threads.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "capability/cuda_raii.h"
#include "gpuscope/capability.h"

namespace gpuscope::capability {

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

constexpr int kWarmup = 2;

// Enough repeats for a stable median at small sizes, few at large ones.
int repeats_for(std::uint64_t bytes) {
  const std::uint64_t r = (256ull << 20) / std::max<std::uint64_t>(bytes, 1);
  return static_cast<int>(std::clamp<std::uint64_t>(r, 10, 50));
}

struct Buffers {
  DeviceBuffer device_in;   // H2D destination
  DeviceBuffer device_out;  // D2H source
  PinnedBuffer pinned_src;
  PinnedBuffer pinned_dst;
  std::unique_ptr<unsigned char[]> pageable_src;
  std::unique_ptr<unsigned char[]> pageable_dst;
  Stream h2d;
  Stream d2h;
};

Status copy_and_wait(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                     cudaStream_t stream) {
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream)));
  return GPUSCOPE_API_CHECK(cudaStreamSynchronize(stream));
}

// One pageable run, host clock.
Result<double> pageable_run(Buffers& b, CopyDirection direction, std::size_t bytes) {
  const auto start = Clock::now();
  if (direction == CopyDirection::host_to_device) {
    GPUSCOPE_RETURN_IF_ERROR(copy_and_wait(b.device_in.get(), b.pageable_src.get(), bytes,
                                           cudaMemcpyHostToDevice, b.h2d.get()));
  } else if (direction == CopyDirection::device_to_host) {
    GPUSCOPE_RETURN_IF_ERROR(copy_and_wait(b.pageable_dst.get(), b.device_out.get(), bytes,
                                           cudaMemcpyDeviceToHost, b.d2h.get()));
  } else {
    Status other;
    std::thread d2h([&] {
      other = copy_and_wait(b.pageable_dst.get(), b.device_out.get(), bytes, cudaMemcpyDeviceToHost,
                            b.d2h.get());
    });
    Status mine = copy_and_wait(b.device_in.get(), b.pageable_src.get(), bytes,
                                cudaMemcpyHostToDevice, b.h2d.get());
    d2h.join();
    GPUSCOPE_RETURN_IF_ERROR(mine);
    GPUSCOPE_RETURN_IF_ERROR(other);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Enqueues one pinned run between `start` and `stop` (recorded on the H2D stream).
Status enqueue_pinned_run(Buffers& b, CopyDirection direction, std::size_t bytes,
                          const Event& start, const Event& stop, const Event& joined) {
  cudaStream_t h2d = b.h2d.get();
  cudaStream_t d2h = b.d2h.get();
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(start.get(), h2d)));
  if (direction == CopyDirection::host_to_device) {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyAsync(
        b.device_in.get(), b.pinned_src.get(), bytes, cudaMemcpyHostToDevice, h2d)));
  } else if (direction == CopyDirection::device_to_host) {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyAsync(
        b.pinned_dst.get(), b.device_out.get(), bytes, cudaMemcpyDeviceToHost, h2d)));
  } else {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamWaitEvent(d2h, start.get(), 0)));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyAsync(
        b.device_in.get(), b.pinned_src.get(), bytes, cudaMemcpyHostToDevice, h2d)));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyAsync(
        b.pinned_dst.get(), b.device_out.get(), bytes, cudaMemcpyDeviceToHost, d2h)));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(joined.get(), d2h)));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamWaitEvent(h2d, joined.get(), 0)));
  }
  return GPUSCOPE_API_CHECK(cudaEventRecord(stop.get(), h2d));
}

Result<std::vector<double>> pinned_runs(Buffers& b, CopyDirection direction, std::size_t bytes,
                                        int repeats) {
  const auto total = static_cast<std::size_t>(kWarmup + repeats);
  std::vector<Event> events;
  for (std::size_t i = 0; i < 3 * total; ++i) {
    GPUSCOPE_ASSIGN_OR_RETURN(Event e, make_event());
    events.push_back(std::move(e));
  }
  for (std::size_t i = 0; i < total; ++i) {
    GPUSCOPE_RETURN_IF_ERROR(enqueue_pinned_run(b, direction, bytes, events[3 * i],
                                                events[3 * i + 1], events[3 * i + 2]));
  }
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamSynchronize(b.h2d.get())));
  std::vector<double> seconds;
  for (std::size_t i = kWarmup; i < total; ++i) {
    GPUSCOPE_ASSIGN_OR_RETURN(double t, elapsed_seconds(events[3 * i], events[3 * i + 1]));
    seconds.push_back(t);
  }
  return seconds;
}

Result<HostLinkResult> measure_one(Buffers& b, HostMemory memory, CopyDirection direction,
                                   std::uint64_t size) {
  const int repeats = repeats_for(size);
  std::vector<double> seconds;
  if (memory == HostMemory::pinned) {
    GPUSCOPE_ASSIGN_OR_RETURN(seconds, pinned_runs(b, direction, size, repeats));
  } else {
    for (int i = 0; i < kWarmup + repeats; ++i) {
      GPUSCOPE_ASSIGN_OR_RETURN(double t, pageable_run(b, direction, size));
      if (i >= kWarmup) seconds.push_back(t);
    }
  }
  const WindowSummary summary = summarize(seconds);
  HostLinkResult r;
  r.direction = direction;
  r.memory = memory;
  r.size_bytes = size;
  r.bytes_moved = direction == CopyDirection::bidirectional ? 2 * size : size;
  r.repeats = repeats;
  r.median_seconds = summary.median;
  r.min_seconds = summary.min;
  r.max_seconds = summary.max;
  r.timing = memory == HostMemory::pinned ? "cuda_events" : "host_clock";
  return r;
}

}  // namespace

Result<std::vector<HostLinkResult>> measure_host_link(const HostLinkOptions& options) {
  if (options.min_bytes < 1 || options.max_bytes < options.min_bytes || options.size_factor < 2) {
    return Status(Code::invalid_argument, "host link: need 0 < min <= max and factor >= 2");
  }
  GPUSCOPE_ASSIGN_OR_RETURN(DeviceInfo device, query_device());
  (void)device;
  const std::size_t max = options.max_bytes;
  Buffers b;
  GPUSCOPE_ASSIGN_OR_RETURN(b.device_in, DeviceBuffer::allocate(max));
  GPUSCOPE_ASSIGN_OR_RETURN(b.device_out, DeviceBuffer::allocate(max));
  GPUSCOPE_ASSIGN_OR_RETURN(b.pinned_src, PinnedBuffer::allocate(max));
  GPUSCOPE_ASSIGN_OR_RETURN(b.pinned_dst, PinnedBuffer::allocate(max));
  b.pageable_src.reset(new (std::nothrow) unsigned char[max]);
  b.pageable_dst.reset(new (std::nothrow) unsigned char[max]);
  if (!b.pageable_src || !b.pageable_dst) {
    return Status(Code::out_of_memory, fmt::format("host link: {} bytes of host memory", 2 * max));
  }
  // Touch every page (the first copy would otherwise pay for page faults) with non-zero data.
  std::memset(b.pageable_src.get(), 0x5A, max);
  std::memset(b.pageable_dst.get(), 0xA5, max);
  std::memset(b.pinned_src.get(), 0x5A, max);
  std::memset(b.pinned_dst.get(), 0xA5, max);
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemset(b.device_out.get(), 0x3C, max)));
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaDeviceSynchronize()));
  GPUSCOPE_ASSIGN_OR_RETURN(b.h2d, make_stream());
  GPUSCOPE_ASSIGN_OR_RETURN(b.d2h, make_stream());

  std::vector<HostLinkResult> results;
  for (HostMemory memory : {HostMemory::pinned, HostMemory::pageable}) {
    for (CopyDirection direction : {CopyDirection::host_to_device, CopyDirection::device_to_host,
                                    CopyDirection::bidirectional}) {
      for (std::uint64_t size = options.min_bytes; size <= options.max_bytes;
           size *= static_cast<std::uint64_t>(options.size_factor)) {
        if (options.should_stop && options.should_stop()) return results;
        GPUSCOPE_ASSIGN_OR_RETURN(HostLinkResult r, measure_one(b, memory, direction, size));
        if (options.on_result) options.on_result(r);
        results.push_back(std::move(r));
      }
    }
  }
  return results;
}

}  // namespace gpuscope::capability
