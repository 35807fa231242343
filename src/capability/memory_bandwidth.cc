// Device-memory bandwidth: copy, read and write kernels and cudaMemcpy over buffers far larger
// than L2, each run timed with CUDA events, median of `repeats` after warm-up.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "capability/cuda_raii.h"
#include "capability/memory_kernels.h"
#include "capability/random_fill.h"
#include "gpuscope/capability.h"

namespace gpuscope::capability {

namespace {

using namespace detail;

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr int kWarmup = 3;

std::uint64_t choose_buffer_bytes(const MemoryBandwidthOptions& options, const DeviceInfo& device,
                                  std::uint64_t free_bytes) {
  std::uint64_t bytes = options.buffer_bytes;
  if (bytes == 0) bytes = std::max<std::uint64_t>(1024 * kMiB, 16 * device.l2_cache_bytes);
  const auto allowed =
      static_cast<std::uint64_t>(options.memory_fraction * static_cast<double>(free_bytes) / 2);
  return std::min(bytes, allowed) / kMiB * kMiB;  // a whole number of MiB: 16-byte multiple
}

// Median of `repeats` runs of `launch`, each between two events; all enqueued, then one sync.
Result<MemoryBandwidthResult> time_runs(MemoryKernel kernel, std::uint64_t buffer_bytes,
                                        int repeats, cudaStream_t stream,
                                        const std::function<Status()>& launch) {
  for (int i = 0; i < kWarmup; ++i) GPUSCOPE_RETURN_IF_ERROR(launch());
  std::vector<Event> starts;
  std::vector<Event> stops;
  for (int r = 0; r < repeats; ++r) {
    GPUSCOPE_ASSIGN_OR_RETURN(Event start, make_event());
    GPUSCOPE_ASSIGN_OR_RETURN(Event stop, make_event());
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(start.get(), stream)));
    GPUSCOPE_RETURN_IF_ERROR(launch());
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(stop.get(), stream)));
    starts.push_back(std::move(start));
    stops.push_back(std::move(stop));
  }
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamSynchronize(stream)));
  std::vector<double> seconds;
  for (std::size_t r = 0; r < starts.size(); ++r) {
    GPUSCOPE_ASSIGN_OR_RETURN(double t, elapsed_seconds(starts[r], stops[r]));
    seconds.push_back(t);
  }
  const WindowSummary summary = summarize(seconds);
  MemoryBandwidthResult result;
  result.kernel = kernel;
  result.buffer_bytes = buffer_bytes;
  const bool reads = kernel != MemoryKernel::write;
  const bool writes = kernel != MemoryKernel::read;
  result.bytes_read = reads ? buffer_bytes : 0;
  result.bytes_written = writes ? buffer_bytes : 0;
  result.repeats = repeats;
  result.median_seconds = summary.median;
  result.min_seconds = summary.min;
  result.max_seconds = summary.max;
  return result;
}

}  // namespace

Result<std::vector<MemoryBandwidthResult>> measure_memory_bandwidth(
    const MemoryBandwidthOptions& options) {
  if (options.repeats < 1 || !(options.memory_fraction > 0 && options.memory_fraction <= 1)) {
    return Status(Code::invalid_argument, "repeats >= 1 and memory fraction in (0, 1]");
  }
  GPUSCOPE_ASSIGN_OR_RETURN(DeviceInfo device, query_device());
  const std::uint64_t bytes = choose_buffer_bytes(options, device, device.free_memory_bytes);
  if (bytes < 64 * kMiB) {
    return Status(Code::out_of_memory, "less than 2 x 64 MiB of device memory allowed");
  }
  GPUSCOPE_ASSIGN_OR_RETURN(Stream stream, make_stream());
  GPUSCOPE_ASSIGN_OR_RETURN(DeviceBuffer src, DeviceBuffer::allocate(bytes));
  GPUSCOPE_ASSIGN_OR_RETURN(DeviceBuffer dst, DeviceBuffer::allocate(bytes));
  GPUSCOPE_ASSIGN_OR_RETURN(DeviceBuffer sink, DeviceBuffer::allocate(16));
  GPUSCOPE_RETURN_IF_ERROR(
      fill_random(ElementType::f32, src.get(), bytes / 4, 1.0, 42, device.sm_count, stream.get()));
  const int blocks = device.sm_count * 8;
  cudaStream_t s = stream.get();

  // The copy kernel: the variant with the best median over a few runs.
  CopyVariant best = CopyVariant::grid_stride;
  double best_seconds = 0;
  for (CopyVariant variant : kCopyVariants) {
    GPUSCOPE_ASSIGN_OR_RETURN(
        MemoryBandwidthResult trial, time_runs(MemoryKernel::copy, bytes, 5, s, [&] {
          return launch_copy_kernel(variant, src.get(), dst.get(), bytes, device.sm_count, s);
        }));
    if (best_seconds == 0 || trial.median_seconds < best_seconds) {
      best = variant;
      best_seconds = trial.median_seconds;
    }
  }

  const std::pair<MemoryKernel, std::function<Status()>> runs[] = {
      {MemoryKernel::copy,
       [&] { return launch_copy_kernel(best, src.get(), dst.get(), bytes, device.sm_count, s); }},
      {MemoryKernel::read,
       [&] { return launch_read_kernel(src.get(), bytes, sink.get(), blocks, s); }},
      {MemoryKernel::write, [&] { return launch_write_kernel(dst.get(), bytes, blocks, s); }},
      {MemoryKernel::memcpy,
       [&] {
         return GPUSCOPE_API_CHECK(
             cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
       }},
  };
  std::vector<MemoryBandwidthResult> results;
  for (const auto& [kernel, launch] : runs) {
    if (options.should_stop && options.should_stop()) break;
    GPUSCOPE_ASSIGN_OR_RETURN(MemoryBandwidthResult r,
                              time_runs(kernel, bytes, options.repeats, s, launch));
    if (kernel == MemoryKernel::copy) r.variant = std::string(copy_variant_name(best));
    results.push_back(r);
  }
  return results;
}

}  // namespace gpuscope::capability
