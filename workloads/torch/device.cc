#include "device.h"

#include <ATen/cpu/Utils.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

namespace gpuscope::workloads {
namespace {

bool cpu_has(const std::unordered_map<std::string, c10::IValue>& caps, const std::string& name) {
  const auto it = caps.find(name);
  return it != caps.end() && it->second.isBool() && it->second.toBool();
}

}  // namespace

std::variant<DeviceInfo, std::string> open_device(std::string_view spec) {
  DeviceInfo info;
  if (spec == "cpu") {
    info.name = "cpu";
    const auto caps = at::cpu::get_cpu_capabilities();
    info.cpu_native_fp16 = cpu_has(caps, "avx512_fp16") || cpu_has(caps, "amx_fp16");
    return info;
  }
  if (spec != "cuda" && !spec.starts_with("cuda:")) {
    return "unknown device '" + std::string(spec) + "' (expected cpu, cuda or cuda:N)";
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (count == 0) return std::string("no CUDA device is visible");
  int index = 0;
  if (spec.size() > 5) {
    try {
      index = std::stoi(std::string(spec.substr(5)));
    } catch (const std::exception&) {
      return "bad CUDA device index in '" + std::string(spec) + "'";
    }
  }
  if (index < 0 || index >= count) {
    return "there is no CUDA device " + std::to_string(index) + " (" + std::to_string(count) +
           " visible)";
  }
  info.device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
  const cudaDeviceProp* props = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index));
  info.name = props->name;
  info.cc_major = props->major;
  info.cc_minor = props->minor;
  info.sm_count = props->multiProcessorCount;
  info.total_memory_bytes = static_cast<int64_t>(props->totalGlobalMem);
  return info;
}

void synchronize(const DeviceInfo& device) {
  if (device.is_cuda()) c10::cuda::device_synchronize();
}

std::optional<MemoryPeaks> memory_peaks(const DeviceInfo& device) {
  if (!device.is_cuda()) return std::nullopt;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.device.index());
  constexpr auto kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  return MemoryPeaks{stats.allocated_bytes[kAll].peak, stats.reserved_bytes[kAll].peak};
}

void reset_memory_peaks(const DeviceInfo& device) {
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.device.index());
}

void release_cached_memory(const DeviceInfo& device) {
  if (!device.is_cuda()) return;
  synchronize(device);
  c10::cuda::CUDACachingAllocator::emptyCache();
}

bool is_out_of_memory(const c10::Error& error) {
  return dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr;
}

struct RunStream::Impl {
  explicit Impl(c10::cuda::CUDAStream stream) : guard(stream) {}
  c10::cuda::CUDAStreamGuard guard;
};

RunStream::RunStream(const DeviceInfo& device) {
  if (!device.is_cuda()) return;
  auto stream = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.device.index());
  // Work queued before (parameter initialization on the default stream) must finish first.
  synchronize(device);
  impl_ = std::make_unique<Impl>(stream);
}

RunStream::~RunStream() = default;

}  // namespace gpuscope::workloads
