// What the CUDA runtime sees: its devices (in CUDA's order, after CUDA_VISIBLE_DEVICES) and
// versions. Probing never creates a CUDA context, so it is cheap and leaves the GPU alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope {

struct CudaDeviceProps {
  int ordinal = 0;  // CUDA device number in this process
  std::string name;
  std::string pci_bus_id;  // as CUDA prints it: "0000:18:00.0"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t total_memory_bytes = 0;
  std::uint64_t l2_cache_bytes = 0;
};

struct CudaInventory {
  Status status;  // why no devices are listed (no driver, none visible...), ok otherwise
  std::optional<int> runtime_version;  // e.g. 13000
  std::optional<int> driver_version;   // the newest CUDA version the driver supports
  std::vector<CudaDeviceProps> devices;
};

CudaInventory probe_cuda();

// True when two PCI bus ids name the same device, whatever the domain width
// ("00000000:18:00.0" from NVML vs "0000:18:00.0" from CUDA) or letter case.
bool same_pci_bus_id(const std::string& a, const std::string& b);

}  // namespace gpuscope
