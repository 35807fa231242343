// ProcessGroupNCCL (CUDA collectives), in libtorch_cuda. Its header includes nccl.h: the build
// finds it in the CUDA toolkit or the torch wheel's nvidia-nccl package (GPUSCOPE_TORCH_HAVE_NCCL).
#include "distributed/process_group.h"

#include <stdexcept>

#ifdef GPUSCOPE_TORCH_HAVE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace gpuscope::workloads {

bool have_nccl() {
#ifdef GPUSCOPE_TORCH_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

namespace detail {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(
    [[maybe_unused]] const c10::intrusive_ptr<c10d::Store>& store, [[maybe_unused]] int rank,
    [[maybe_unused]] int size, [[maybe_unused]] std::chrono::milliseconds timeout) {
#ifdef GPUSCOPE_TORCH_HAVE_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
#else
  throw std::runtime_error("this gpuscope-torch was built without NCCL (nccl.h not found)");
#endif
}

}  // namespace detail
}  // namespace gpuscope::workloads
