// An NVTX range for the life of a scope (CUDA's header-only NVTX 3: costs nothing unless a tool
// such as Nsight Systems or gpuscope's injection library is attached).
#pragma once

#include <nvtx3/nvToolsExt.h>

namespace gpuscope::workloads {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace gpuscope::workloads
