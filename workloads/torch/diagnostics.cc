#include "diagnostics.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <sys/stat.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/cuda/memory_snapshot.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "input/files.h"  // POSIX, not std::filesystem (files.h says why)

namespace gpuscope::workloads {
namespace {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

// Allocator events kept: GPT-2 training makes about 2,000 a step, so a whole default run fits.
constexpr size_t kMaxHistoryEntries = 2'000'000;

std::set<ActivityType> activities_for(const DeviceInfo& device) {
  std::set<ActivityType> out{ActivityType::CPU};
  if (device.is_cuda()) out.insert(ActivityType::CUDA);
  return out;
}

ProfilerConfig kineto_config() {
  return ProfilerConfig(ProfilerState::KINETO, /*report_input_shapes=*/false,
                        /*profile_memory=*/false, /*with_stack=*/false, /*with_flops=*/false,
                        /*with_modules=*/false);
}

std::optional<std::string> written(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || info.st_size == 0) {
    return "nothing was written to " + path;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unwritable_reason(const std::string& path) {
  if (path_kind(path) == PathKind::directory) return path + " is a directory";
  const auto slash = path.find_last_of('/');
  const std::string folder =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (path_kind(folder) != PathKind::directory) return "no folder " + folder + " for " + path;
  if (::access(folder.c_str(), W_OK) != 0) return "cannot write in " + folder;
  return std::nullopt;
}

std::optional<std::string> MemoryHistory::unavailable_reason(const DeviceInfo& device) {
  if (!device.is_cuda()) {
    return "--memory-snapshot records the CUDA caching allocator; this run is on " +
           device.device.str();
  }
  return std::nullopt;
}

MemoryHistory::MemoryHistory() {
  // "all": allocations, frees and segment events; no context (stacks), which would cost an
  // unwind per allocation and a symbolization pass at the end.
  torch::cuda::_record_memory_history(std::string("all"), std::nullopt, "python",
                                      kMaxHistoryEntries);
}

MemoryHistory::~MemoryHistory() {
  try {
    torch::cuda::_record_memory_history(std::nullopt);
  } catch (const std::exception&) {
    // Stopping a recorder cannot be reported from a destructor; the process is ending anyway.
  }
}

void MemoryHistory::mark(const std::string& name) {
  c10::cuda::CUDACachingAllocator::recordAnnotation({{"name", name}, {"stage", "START"}});
}

std::optional<std::string> MemoryHistory::save(const std::string& path) const {
  std::string pickled;
  try {
    pickled = torch::cuda::_memory_snapshot_pickled();
  } catch (const std::exception& e) {
    return std::string("could not take the allocator snapshot: ") + e.what();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(pickled.data(), static_cast<std::streamsize>(pickled.size()));
  out.close();
  if (!out) return "could not write " + path + " (" + std::to_string(pickled.size()) + " bytes)";
  return std::nullopt;
}

KernelTrace::KernelTrace(const DeviceInfo& device) {
  const auto activities = activities_for(device);
  profiler::prepareProfiler(kineto_config(), activities);
  profiler::enableProfiler(kineto_config(), activities);
  active_ = true;
}

KernelTrace::~KernelTrace() {
  if (!active_) return;
  try {
    profiler::disableProfiler();
  } catch (const std::exception&) {
    // As ~MemoryHistory: nothing to report to.
  }
}

std::optional<std::string> KernelTrace::finish(const std::string& path) {
  active_ = false;
  std::unique_ptr<profiler::ProfilerResult> result;
  try {
    result = profiler::disableProfiler();
    if (!result) return std::string("the profiler returned no trace");
    result->save(path);  // Kineto logs a failure to open the file instead of throwing
  } catch (const std::exception& e) {
    return std::string("the trace failed: ") + e.what();
  }
  return written(path);
}

}  // namespace gpuscope::workloads
