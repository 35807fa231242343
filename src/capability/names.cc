// Stable lower-case names of the capability enums (used in JSON output).
#include "gpuscope/capability.h"

namespace gpuscope::capability {

std::string_view memory_kernel_name(MemoryKernel kernel) {
  switch (kernel) {
    case MemoryKernel::copy:
      return "copy";
    case MemoryKernel::read:
      return "read";
    case MemoryKernel::write:
      return "write";
    case MemoryKernel::memcpy:
      return "memcpy";
  }
  return "unknown";
}

std::string_view host_memory_name(HostMemory memory) {
  switch (memory) {
    case HostMemory::pageable:
      return "pageable";
    case HostMemory::pinned:
      return "pinned";
  }
  return "unknown";
}

std::string_view copy_direction_name(CopyDirection direction) {
  switch (direction) {
    case CopyDirection::host_to_device:
      return "h2d";
    case CopyDirection::device_to_host:
      return "d2h";
    case CopyDirection::bidirectional:
      return "bidirectional";
  }
  return "unknown";
}

}  // namespace gpuscope::capability
