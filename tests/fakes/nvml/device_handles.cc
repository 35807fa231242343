#include "device_handles.h"

#include <cstdint>

#include "scenario.h"

// nvml.h leaves the type opaque; the fake's handles are slots in the pool below, and only
// their addresses carry meaning.
struct nvmlDevice_st {
  unsigned char unused;
};

namespace gpuscope::fake_nvml {
namespace {

// Slot 0 of each row is the GPU, slots 1.. its MIG devices.
constexpr unsigned kSlotsPerGpu = 1 + kMaxMigDevices;
nvmlDevice_st g_pool[kMaxDevices][kSlotsPerGpu];

}  // namespace

nvmlDevice_t gpu_handle(unsigned gpu) {
  return &g_pool[gpu][0];
}

nvmlDevice_t mig_handle(unsigned gpu, unsigned mig) {
  return &g_pool[gpu][1 + mig];
}

std::optional<HandleTarget> decode_handle(nvmlDevice_t handle) {
  // Integer arithmetic, because comparing unrelated pointers is undefined.
  const auto base = reinterpret_cast<std::uintptr_t>(&g_pool[0][0]);
  const auto address = reinterpret_cast<std::uintptr_t>(handle);
  if (address < base) return std::nullopt;
  const std::uintptr_t offset = address - base;
  if (offset % sizeof(nvmlDevice_st) != 0) return std::nullopt;
  const std::uintptr_t slot = offset / sizeof(nvmlDevice_st);
  if (slot >= std::uintptr_t{kMaxDevices} * kSlotsPerGpu) return std::nullopt;
  HandleTarget target;
  target.gpu = static_cast<unsigned>(slot / kSlotsPerGpu);
  const auto column = static_cast<unsigned>(slot % kSlotsPerGpu);
  if (column > 0) target.mig = column - 1;
  return target;
}

}  // namespace gpuscope::fake_nvml
