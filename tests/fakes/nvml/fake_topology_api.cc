// How the GPUs are joined: the PCIe path between two (a scenario device's "pcie_topology") and
// its NVLinks (its "nvlink": link_count, and "peers": how many links go to which GPU).
#include <cstdio>

#include "api_call.h"
#include "device_handles.h"

using gpuscope::fake_nvml::ApiCall;

namespace {

// The GPU (scenario index) at the far end of `link`, or nullopt when the scenario does not say.
std::optional<unsigned> far_end(const gpuscope::fake_nvml::Nvlink& nvlink, unsigned link) {
  unsigned first = 0;
  for (const auto& [peer, links] : nvlink.peers) {
    if (link < first + links) return peer;
    first += links;
  }
  return std::nullopt;
}

// The scenario index of `device`, a GPU of the scenario that a call names beside the one it is
// about; nullopt when it is not one.
std::optional<unsigned> other_gpu(const ApiCall& call, nvmlDevice_t device) {
  const auto other = gpuscope::fake_nvml::decode_handle(device);
  if (!other || other->mig || other->gpu >= call.scenario().devices.size()) return std::nullopt;
  return other->gpu;
}

// The checks of a call about one of a GPU's NVLinks, after the device's: NOT_SUPPORTED without
// NVLinks, INVALID_ARGUMENT for a link it does not have or a null `out`.
nvmlReturn_t check_link(ApiCall& call, nvmlDevice_t device, unsigned link, const void* out) {
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& nvlink = call.device().nvlink;
  if (!nvlink) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= nvlink->link_count || out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

}  // namespace

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(
    nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuTopologyLevel_t* path) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device1); rc != NVML_SUCCESS) return rc;
  const auto other = other_gpu(call, device2);
  if (!other || path == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& levels = call.device().pcie_topology;
  const auto it = levels.find(*other);
  if (it == levels.end()) return NVML_ERROR_NOT_SUPPORTED;
  *path = static_cast<nvmlGpuTopologyLevel_t>(it->second);
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device,
                                                                unsigned int link,
                                                                nvmlEnableState_t* is_active) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = check_link(call, device, link, is_active); rc != NVML_SUCCESS) {
    return rc;
  }
  const auto& nvlink = call.device().nvlink;
  const bool active = nvlink->peers.empty() || far_end(*nvlink, link).has_value();
  *is_active = active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
                                                                           unsigned int link,
                                                                           nvmlPciInfo_t* pci) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = check_link(call, device, link, pci); rc != NVML_SUCCESS) return rc;
  const auto& nvlink = call.device().nvlink;
  const auto peer = far_end(*nvlink, link);
  const bool to_switch = nvlink->nvswitch && nvlink->peers.empty();
  if (!to_switch && (!peer || *peer >= call.scenario().devices.size())) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  unsigned domain = 0, bus = 0, slot = 0, function = 0;
  std::sscanf(to_switch ? "00000000:FF:00.0" : call.scenario().devices[*peer].pci_bus_id.c_str(),
              "%x:%x:%x.%x", &domain, &bus, &slot, &function);
  *pci = nvmlPciInfo_t{};
  std::snprintf(pci->busId, sizeof pci->busId, NVML_DEVICE_PCI_BUS_ID_FMT, domain, bus, slot);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = slot;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1,
                                                              nvmlDevice_t device2,
                                                              nvmlGpuP2PCapsIndex_t index,
                                                              nvmlGpuP2PStatus_t* status) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device1); rc != NVML_SUCCESS) return rc;
  const auto other = other_gpu(call, device2);
  if (!other || status == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& mine = call.device().nvlink;
  const auto& theirs = call.scenario().devices[*other].nvlink;
  bool joined = false;
  if (index == NVML_P2P_CAPS_INDEX_NVLINK && mine) {
    joined = mine->peers.count(*other) > 0 || (mine->nvswitch && theirs && theirs->nvswitch);
  }
  *status = joined ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
  return NVML_SUCCESS;
}
