// ProcessGroupGloo (CPU collectives). Its header needs Gloo's, which the torch wheel does not
// ship: the build uses Debian's libgloo-dev headers when found (GPUSCOPE_TORCH_HAVE_GLOO); the
// code itself is in libtorch_cpu.
#include "distributed/process_group.h"

#include <stdexcept>

#ifdef GPUSCOPE_TORCH_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif

namespace gpuscope::workloads {

bool have_gloo() {
#ifdef GPUSCOPE_TORCH_HAVE_GLOO
  return true;
#else
  return false;
#endif
}

namespace detail {

c10::intrusive_ptr<c10d::Backend> make_gloo_backend(
    [[maybe_unused]] const c10::intrusive_ptr<c10d::Store>& store, [[maybe_unused]] int rank,
    [[maybe_unused]] int size, [[maybe_unused]] std::chrono::milliseconds timeout) {
#ifdef GPUSCOPE_TORCH_HAVE_GLOO
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->timeout = timeout;
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
#else
  throw std::runtime_error(
      "this gpuscope-torch was built without Gloo's headers: no collectives on the CPU");
#endif
}

}  // namespace detail
}  // namespace gpuscope::workloads
