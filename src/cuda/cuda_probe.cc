#include "gpuscope/cuda_probe.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdio>

#include "cuda/cuda_error.h"

namespace gpuscope {
namespace {

struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
};

std::optional<PciAddress> parse_pci(const std::string& text) {
  PciAddress a;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &a.domain, &a.bus, &a.device, &a.function) == 4) {
    return a;
  }
  return std::nullopt;
}

}  // namespace

bool same_pci_bus_id(const std::string& a, const std::string& b) {
  auto pa = parse_pci(a), pb = parse_pci(b);
  return pa && pb && pa->domain == pb->domain && pa->bus == pb->bus && pa->device == pb->device &&
         pa->function == pb->function;
}

CudaInventory probe_cuda() {
  CudaInventory inventory;
  int version = 0;
  if (cudaRuntimeGetVersion(&version) == cudaSuccess) inventory.runtime_version = version;
  if (cudaDriverGetVersion(&version) == cudaSuccess && version > 0) {
    inventory.driver_version = version;
  }

  int count = 0;
  inventory.status = GPUSCOPE_API_CHECK(cudaGetDeviceCount(&count));
  if (!inventory.status.ok()) return inventory;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CudaDeviceProps props;
    props.ordinal = ordinal;
    cudaDeviceProp p{};
    Status status = GPUSCOPE_API_CHECK(cudaGetDeviceProperties(&p, ordinal));
    if (!status.ok()) {
      inventory.status = status;
      continue;
    }
    props.name = p.name;
    props.cc_major = p.major;
    props.cc_minor = p.minor;
    props.sm_count = p.multiProcessorCount;
    props.total_memory_bytes = p.totalGlobalMem;
    props.l2_cache_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal) == cudaSuccess) {
      props.pci_bus_id = bus_id;
    }
    inventory.devices.push_back(std::move(props));
  }
  return inventory;
}

}  // namespace gpuscope
