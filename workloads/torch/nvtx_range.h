// An NVTX range for the life of a scope (CUDA's header-only NVTX 3: costs nothing unless a tool
// such as Nsight Systems or gpuscope's injection library is attached).
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <cstdint>

namespace gpuscope::workloads {

// Every step is a range of this one name (`gpuscope trace --step-range "gpuscope-torch step"`)
// and ends with the mark gpuscope's trace counts steps by (GPUSCOPE_TRACE_STEP_MARK's default),
// the step's number as its payload: `gpuscope trace -- gpuscope-torch ...` finds the steps and
// places its window by them without options.
inline constexpr const char* kStepRangeName = "gpuscope-torch step";
inline constexpr const char* kStepMarkName = "gpuscope.step";

// The step mark: `step` as an int64 payload.
inline void mark_step_end(int64_t step) {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = kStepMarkName;
  attributes.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  attributes.payload.llValue = step;
  nvtxMarkEx(&attributes);
}

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace gpuscope::workloads
