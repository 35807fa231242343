// The device a workload runs on: parsing "cuda:0"/"cpu", its properties, memory statistics of
// the caching allocator, synchronization and the stream the run uses. The CUDA-specific calls of
// gpuscope-torch outside CUDA graphs and timing live here.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace gpuscope::workloads {

struct DeviceInfo {
  at::Device device{at::kCPU};
  std::string name;  // "NVIDIA H100 80GB HBM3", or "cpu"
  int cc_major = 0;  // CUDA compute capability; 0 on the CPU
  int cc_minor = 0;
  int sm_count = 0;
  int64_t total_memory_bytes = 0;  // 0 on the CPU
  // CPU only: fp16 arithmetic in hardware (AVX512-FP16 or AMX-FP16). Without it LibTorch
  // emulates fp16 GEMMs, hundreds of times slower than fp32.
  bool cpu_native_fp16 = false;

  bool is_cuda() const { return device.is_cuda(); }
  int compute_capability() const { return cc_major * 10 + cc_minor; }
};

// Resolves "cuda", "cuda:N" or "cpu". Returns the reason as a string when the device cannot be
// used (unknown name, no CUDA device, index out of range).
std::variant<DeviceInfo, std::string> open_device(std::string_view spec);

// Waits for all work queued on the device (no-op on the CPU).
void synchronize(const DeviceInfo& device);

// Peak bytes held by tensors (allocated) and by the caching allocator (reserved) since the last
// reset_memory_peaks; nullopt on the CPU, which has no such counters.
struct MemoryPeaks {
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
};
std::optional<MemoryPeaks> memory_peaks(const DeviceInfo& device);
void reset_memory_peaks(const DeviceInfo& device);
// Returns cached, unused blocks to the driver (after an out-of-memory probe, before a capture).
void release_cached_memory(const DeviceInfo& device);

// True when `error` is LibTorch's out-of-memory error.
bool is_out_of_memory(const c10::Error& error);

// Makes a stream from LibTorch's pool the current stream of this thread for the scope's life
// (CUDA graphs cannot be captured on the legacy default stream); a no-op on the CPU.
class RunStream {
 public:
  explicit RunStream(const DeviceInfo& device);
  ~RunStream();
  RunStream(const RunStream&) = delete;
  RunStream& operator=(const RunStream&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscope::workloads
