// Which CUDA runtime and driver calls get an API record in the recording window. Recording every
// call (PyTorch makes several per kernel: cudaGetDevice, cudaStreamGetCaptureInfo, ...) costs a
// record each; the analysis needs only the calls that put work on the GPU or wait for it: kernel
// and graph launches (a kernel's launch time and thread), copies and memsets, synchronizations,
// and allocations (they synchronize too). GPUSCOPE_TRACE_API=all records every call.
#pragma once

#include <string_view>

namespace gpuscope::inject {

// True for the calls recorded by default, by CUPTI's callback name ("cudaLaunchKernel_v7000",
// "cuMemcpyHtoDAsync_v2", "cuCtxSynchronize").
bool api_call_recorded(std::string_view callback_name);

}  // namespace gpuscope::inject
