// Copy overlapped with compute (see OverlapResult in gpuscope/capability.h): the "pin_memory +
// non_blocking" advice, measured. All three cases are timed the same way, with the host clock
// from the first call to the last synchronization, median of `repeats`.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

#include "capability/cuda_raii.h"
#include "capability/memory_kernels.h"
#include "gpuscope/capability.h"

namespace gpuscope::capability {

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

constexpr int kCalibrationIterations = 1 << 14;

struct Setup {
  DeviceBuffer device;
  DeviceBuffer spin_out;
  PinnedBuffer pinned;
  std::unique_ptr<unsigned char[]> pageable;
  Stream copy;
  Stream compute;
  int blocks = 0;
  std::size_t bytes = 0;
};

struct Plan {
  bool copy = false;
  bool compute = false;
  const void* host = nullptr;
  int iterations = 0;
};

// Host seconds for: copy issued first (if any), then the kernel (if any), then both synced.
Result<double> run_once(Setup& s, const Plan& plan) {
  const auto start = Clock::now();
  if (plan.copy) {
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(
        cudaMemcpyAsync(s.device.get(), plan.host, s.bytes, cudaMemcpyHostToDevice, s.copy.get())));
  }
  if (plan.compute) {
    GPUSCOPE_RETURN_IF_ERROR(
        launch_spin_kernel(s.spin_out.as<float>(), plan.iterations, s.blocks, s.compute.get()));
  }
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamSynchronize(s.copy.get())));
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamSynchronize(s.compute.get())));
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Result<double> median_of(Setup& s, const Plan& plan, int repeats) {
  GPUSCOPE_RETURN_IF_ERROR(run_once(s, plan).status());  // warm-up
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    GPUSCOPE_ASSIGN_OR_RETURN(double t, run_once(s, plan));
    seconds.push_back(t);
  }
  return summarize(seconds).median;
}

// Spin iterations that take about `target` seconds (the kernel's time is linear in them).
Result<int> calibrate(Setup& s, double target) {
  Plan probe{false, true, nullptr, kCalibrationIterations};
  GPUSCOPE_ASSIGN_OR_RETURN(double t, median_of(s, probe, 3));
  const double iterations = kCalibrationIterations * target / std::max(t, 1e-6);
  return static_cast<int>(std::clamp(iterations, 1.0, 2e9));
}

}  // namespace

Result<std::vector<OverlapResult>> measure_copy_compute_overlap(const OverlapOptions& options) {
  if (options.copy_bytes < 16 || options.repeats < 1) {
    return Status(Code::invalid_argument, "overlap: copy_bytes >= 16 and repeats >= 1");
  }
  GPUSCOPE_ASSIGN_OR_RETURN(DeviceInfo device, query_device());
  Setup s;
  s.bytes = options.copy_bytes;
  s.blocks = device.sm_count * 8;
  GPUSCOPE_ASSIGN_OR_RETURN(s.device, DeviceBuffer::allocate(s.bytes));
  GPUSCOPE_ASSIGN_OR_RETURN(
      s.spin_out, DeviceBuffer::allocate(static_cast<std::size_t>(s.blocks) * 256 * sizeof(float)));
  GPUSCOPE_ASSIGN_OR_RETURN(s.pinned, PinnedBuffer::allocate(s.bytes));
  s.pageable.reset(new (std::nothrow) unsigned char[s.bytes]);
  if (!s.pageable) return Status(Code::out_of_memory, "overlap: pageable host buffer");
  std::memset(s.pinned.get(), 0x5A, s.bytes);
  std::memset(s.pageable.get(), 0x5A, s.bytes);
  GPUSCOPE_ASSIGN_OR_RETURN(s.copy, make_stream());
  GPUSCOPE_ASSIGN_OR_RETURN(s.compute, make_stream());

  std::vector<OverlapResult> results;
  for (HostMemory memory : {HostMemory::pinned, HostMemory::pageable}) {
    if (options.should_stop && options.should_stop()) break;
    const void* host = memory == HostMemory::pinned ? s.pinned.get() : s.pageable.get();
    OverlapResult r;
    r.memory = memory;
    r.copy_bytes = s.bytes;
    r.repeats = options.repeats;
    GPUSCOPE_ASSIGN_OR_RETURN(r.copy_seconds,
                              median_of(s, {true, false, host, 0}, options.repeats));
    GPUSCOPE_ASSIGN_OR_RETURN(int iterations, calibrate(s, r.copy_seconds));
    GPUSCOPE_ASSIGN_OR_RETURN(r.compute_seconds,
                              median_of(s, {false, true, host, iterations}, options.repeats));
    GPUSCOPE_ASSIGN_OR_RETURN(r.both_seconds,
                              median_of(s, {true, true, host, iterations}, options.repeats));
    results.push_back(r);
  }
  return results;
}

}  // namespace gpuscope::capability
