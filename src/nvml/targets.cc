// list_targets(): the targets NVML sees, for resolve_targets().
#include <fmt/format.h>

#include "gpuscope/nvml.h"
#include "gpuscope/target.h"

namespace gpuscope {

Result<std::vector<Target>> list_targets(const nvml::Session& session) {
  GPUSCOPE_ASSIGN_OR_RETURN(unsigned count, session.device_count());
  if (count == 0) return Status(Code::no_device, "the NVIDIA driver is loaded but lists no GPU");
  std::vector<Target> targets;
  for (unsigned i = 0; i < count; ++i) {
    Target gpu;
    gpu.gpu_index = i;
    Result<nvml::Device> device = session.device_by_index(i);
    Result<std::string> uuid = device.ok() ? device->uuid() : Result<std::string>(device.status());
    if (!uuid.ok()) {
      gpu.unavailable = uuid.status();
      targets.push_back(std::move(gpu));
      continue;
    }
    gpu.gpu_uuid = *uuid;
    gpu.gpu_name = device->name().value_or("");
    gpu.name = gpu.gpu_name;
    if (auto pci = device->pci(); pci.ok()) gpu.pci_bus_id = pci->bus_id;
    if (auto memory = device->memory(); memory.ok()) gpu.memory_total_bytes = memory->total_bytes;
    std::vector<nvml::MigDevice> instances;
    if (auto mig = device->mig_mode(); mig.ok() && mig->current) {
      gpu.mig_mode = true;
      if (auto listed = device->mig_devices(); listed.ok()) instances = std::move(listed).value();
    }
    targets.push_back(gpu);
    for (const nvml::MigDevice& d : instances) {
      Target instance = gpu;
      instance.mig_mode = false;
      instance.mig = MigPlacement{d.gpu_instance_id, d.compute_instance_id, d.uuid,
                                  mig_profile_from_name(d.name)};
      instance.name = d.name;
      instance.memory_total_bytes = d.memory_total_bytes;
      instance.sm_count = d.sm_count;
      targets.push_back(std::move(instance));
    }
  }
  return targets;
}

}  // namespace gpuscope
