// NCCL loaded at run time: the handful of entry points gpuscope uses, declared here with NCCL's
// stable C ABI (ncclComm_t is an opaque pointer; result, data type and reduction are C enums
// whose values have not changed since NCCL 2.0), so that no NCCL header or library is needed to
// build. The only file that talks to NCCL.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "gpuscope/status.h"

namespace gpuscope::capability::detail {

using NcclComm = struct NcclCommOpaque*;

class NcclLibrary {
 public:
  // dlopen($GPUSCOPE_NCCL_LIBRARY or "libnccl.so.2"). not_supported when it cannot be loaded.
  static Result<std::unique_ptr<NcclLibrary>> load();
  ~NcclLibrary();

  std::string version() const;  // "2.27.5"
  // One communicator per device ordinal 0..count-1 of this process (ncclCommInitAll).
  Status init_all(int count, NcclComm* comms) const;
  // A float32 sum all-reduce in place on each device's buffer, as one NCCL group.
  // REQUIRES: buffers[i] and streams[i] belong to device i.
  Status all_reduce_group(int count, NcclComm* comms, float* const* buffers, std::size_t elements,
                          cudaStream_t const* streams) const;
  void destroy(NcclComm comm) const;

  struct Api;  // the entry points (nccl_library.cc)

 private:
  NcclLibrary() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
};

}  // namespace gpuscope::capability::detail
