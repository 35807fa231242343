#include "inject/api_calls.h"

namespace gpuscope::inject {
namespace {

constexpr std::string_view kRecorded[] = {
    "Launch",       // cudaLaunchKernel, cudaGraphLaunch, cuLaunchKernelEx, cuLaunchHostFunc, ...
    "Memcpy",       // cudaMemcpyAsync, cuMemcpyHtoD_v2, ...
    "Memset",       // cudaMemsetAsync, cuMemsetD32Async, ...
    "Synchronize",  // cudaStreamSynchronize, cuCtxSynchronize, cudaEventSynchronize, ...
    "WaitEvent",    // cudaStreamWaitEvent, cuStreamWaitEvent
    "Malloc",       // cudaMalloc, cudaMallocHost, cudaMallocAsync, ...
    "MemAlloc",     // cuMemAlloc_v2, cuMemAllocHost, cuMemAllocFromPoolAsync, ...
    "Free",         // cudaFree, cudaFreeHost, cuMemFree_v2, cuMemFreeAsync, ...
    "HostAlloc",    // cudaHostAlloc, cuMemHostAlloc
    "HostRegister",
};

}  // namespace

bool api_call_recorded(std::string_view callback_name) {
  if (!callback_name.starts_with("cu")) return false;
  for (const std::string_view part : kRecorded) {
    if (callback_name.find(part) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace gpuscope::inject
