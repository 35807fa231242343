// nvmlDevice_t values handed out by the fake.
//
// Handles point into a fixed, never-freed pool: a handle from an earlier scenario or from
// before a reset is never dangling, and a pointer that is not a handle at all is recognized
// without being dereferenced (the real NVML answers NVML_ERROR_INVALID_ARGUMENT to both).
#pragma once

#include <optional>

#include "fake_nvml_export.h"

namespace gpuscope::fake_nvml {

struct HandleTarget {
  unsigned gpu = 0;
  std::optional<unsigned> mig;  // index into the GPU's MIG instances; nullopt = the GPU itself
};

// REQUIRES: gpu < kMaxDevices, mig < kMaxMigDevices.
nvmlDevice_t gpu_handle(unsigned gpu);
nvmlDevice_t mig_handle(unsigned gpu, unsigned mig);

// What `handle` stands for, or nullopt when it is not one of the pool's handles. Whether that
// device exists in the current scenario is for the caller to check.
std::optional<HandleTarget> decode_handle(nvmlDevice_t handle);

}  // namespace gpuscope::fake_nvml
