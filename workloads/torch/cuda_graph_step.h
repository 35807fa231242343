// Steps captured as CUDA graphs and replayed: the whole training step (forward, backward, loss
// scaling, AdamW) or the whole forward, launched as one graph instead of hundreds of kernels.
// Follows PyTorch's whole-network capture recipe: warm-up runs eagerly on the same non-default
// stream first (cuDNN/cuBLAS choose algorithms and allocate workspaces), gradients are set to
// none so that each capture allocates them in the graphs' memory pool, and every captured step
// reads fixed input tensors.
//
// One graph per input batch, all sharing one memory pool: replaying graph i on batch i rotates
// the inputs as the eager loop does, with neither copies nor a fixed input buffer beside the
// batches. Sharing the pool is safe because the graphs are replayed one at a time, in stream
// order, and each step's tensors that must outlive it (parameters, optimizer and scaler state,
// the loss) were allocated before the first capture.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "device.h"

namespace at::cuda {
struct CUDAGraph;
}

namespace gpuscope::workloads {

class CudaGraphSteps {
 public:
  explicit CudaGraphSteps(const DeviceInfo& device);
  ~CudaGraphSteps();
  CudaGraphSteps(const CudaGraphSteps&) = delete;
  CudaGraphSteps& operator=(const CudaGraphSteps&) = delete;

  // Captures the work `step` queues as graph number size().
  // REQUIRES: a CUDA device; the run's non-default stream (RunStream) is current; the step has
  // run eagerly on it at least once.
  void capture(const std::function<void()>& step);
  // Launches graph `index` on the current stream; does not synchronize.
  // REQUIRES: index < size().
  void replay(size_t index);
  size_t size() const { return graphs_.size(); }

 private:
  DeviceInfo device_;
  std::vector<std::unique_ptr<at::cuda::CUDAGraph>> graphs_;
};

}  // namespace gpuscope::workloads
