// What a device is: identity, PCI, memory size and use, modes, ECC.
#include <cstdio>

#include "api_call.h"

using gpuscope::fake_nvml::ApiCall;
using gpuscope::fake_nvml::HandleUse;

namespace {

unsigned long long memory_used_bytes(const ApiCall& call) {
  if (call.mig() != nullptr) return call.mig()->memory_used_bytes;
  const auto* used = call.reading("memory_used_bytes");
  return used == nullptr ? 0 : static_cast<unsigned long long>(used->at(call.now()));
}

unsigned long long saturating_sub(unsigned long long a, unsigned long long b) {
  return a > b ? a - b : 0;
}

}  // namespace

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                         unsigned int length) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device, HandleUse::kGpuOrMig); rc != NVML_SUCCESS) {
    return rc;
  }
  const std::string& text = call.mig() != nullptr ? call.mig()->name : call.device().name;
  return gpuscope::fake_nvml::copy_string(text, name, length);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                         unsigned int length) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device, HandleUse::kGpuOrMig); rc != NVML_SUCCESS) {
    return rc;
  }
  const std::string& text = call.mig() != nullptr ? call.mig()->uuid : call.device().uuid;
  return gpuscope::fake_nvml::copy_string(text, uuid, length);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device,
                                                          unsigned int* index) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return gpuscope::fake_nvml::write_value(call.device_index(), index);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
                                                               nvmlPciInfo_t* pci) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& gpu = call.device();
  unsigned domain = 0, bus = 0, slot = 0, function = 0;
  std::sscanf(gpu.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &slot, &function);
  *pci = nvmlPciInfo_t{};
  // The two strings differ in the width of the domain, as NVML's format macros say.
  std::snprintf(pci->busId, sizeof pci->busId, NVML_DEVICE_PCI_BUS_ID_FMT, domain, bus, slot);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT,
                domain & 0xFFFFu, bus, slot);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = slot;
  pci->pciDeviceId = gpu.pci_device_id;
  pci->pciSubSystemId = gpu.pci_subsystem_id;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device,
                                                                          int* major, int* minor) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& capability = call.device().compute_capability;
  if (!capability) return NVML_ERROR_NOT_SUPPORTED;
  if (major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *major = capability->first;
  *minor = capability->second;
  return NVML_SUCCESS;
}

// v2 separates memory the driver reserves from memory processes allocated: "used" is the
// timeline's memory_used_bytes, "free" what is left of the total after both.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                                                  nvmlMemory_v2_t* memory) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device, HandleUse::kGpuOrMig); rc != NVML_SUCCESS) {
    return rc;
  }
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const auto* mig = call.mig();
  const auto total =
      mig != nullptr ? std::optional(mig->memory_total_bytes) : call.device().memory_total_bytes;
  if (!total) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = *total;
  memory->reserved = mig != nullptr ? 0 : call.device().memory_reserved_bytes;
  memory->used = memory_used_bytes(call);
  memory->free = saturating_sub(*total, memory->reserved + memory->used);
  return NVML_SUCCESS;
}

// v1 counts reserved memory as used, as the driver did before v2 existed.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                               nvmlMemory_t* memory) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device, HandleUse::kGpuOrMig); rc != NVML_SUCCESS) {
    return rc;
  }
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto* mig = call.mig();
  const auto total =
      mig != nullptr ? std::optional(mig->memory_total_bytes) : call.device().memory_total_bytes;
  if (!total) return NVML_ERROR_NOT_SUPPORTED;
  const unsigned long long reserved = mig != nullptr ? 0 : call.device().memory_reserved_bytes;
  memory->total = *total;
  memory->used = reserved + memory_used_bytes(call);
  memory->free = saturating_sub(*total, memory->used);
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device,
                                                                   unsigned int* busWidth) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  return gpuscope::fake_nvml::write_value(call.device().memory_bus_width_bits, busWidth);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device,
                                                                    nvmlEnableState_t* mode) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& persistence = call.device().persistence_mode;
  if (!persistence) return NVML_ERROR_NOT_SUPPORTED;
  if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = *persistence ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device,
                                                                nvmlComputeMode_t* mode) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& compute_mode = call.device().compute_mode;
  if (!compute_mode) return NVML_ERROR_NOT_SUPPORTED;
  if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = *compute_mode;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device,
                                                            nvmlEnableState_t* current,
                                                            nvmlEnableState_t* pending) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& ecc = call.device().ecc;
  if (!ecc) return NVML_ERROR_NOT_SUPPORTED;
  if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *current = ecc->current ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  *pending = ecc->pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

// Counts exist only while ECC is on (nvidia-smi shows N/A otherwise).
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device,
                                                                   nvmlMemoryErrorType_t errorType,
                                                                   nvmlEccCounterType_t counterType,
                                                                   unsigned long long* eccCounts) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& ecc = call.device().ecc;
  if (!ecc || !ecc->current) return NVML_ERROR_NOT_SUPPORTED;
  if (eccCounts == nullptr || errorType >= NVML_MEMORY_ERROR_TYPE_COUNT ||
      counterType >= NVML_ECC_COUNTER_TYPE_COUNT) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const bool corrected = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED;
  if (counterType == NVML_VOLATILE_ECC) {
    *eccCounts = corrected ? ecc->corrected_volatile : ecc->uncorrected_volatile;
  } else {
    *eccCounts = corrected ? ecc->corrected_aggregate : ecc->uncorrected_aggregate;
  }
  return NVML_SUCCESS;
}
