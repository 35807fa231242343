#include "cuda_graph_step.h"

#include <ATen/cuda/CUDAGraph.h>

namespace gpuscope::workloads {

CudaGraphSteps::CudaGraphSteps(const DeviceInfo& device) : device_(device) {
  TORCH_CHECK(device.is_cuda(), "CUDA graphs need a CUDA device");
}

CudaGraphSteps::~CudaGraphSteps() = default;

void CudaGraphSteps::capture(const std::function<void()>& step) {
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  if (graphs_.empty()) {
    // The eager warm-up's cached blocks go back first, so the pool does not sit next to an
    // equally large idle cache.
    release_cached_memory(device_);
    graph->capture_begin();
  } else {
    graph->capture_begin(graphs_.front()->pool());
  }
  try {
    step();
  } catch (...) {
    // End the capture so the stream is usable again, then report the original error.
    try {
      graph->capture_end();
    } catch (...) {
    }
    throw;
  }
  graph->capture_end();
  graphs_.push_back(std::move(graph));
}

void CudaGraphSteps::replay(size_t index) {
  graphs_.at(index)->replay();
}

}  // namespace gpuscope::workloads
