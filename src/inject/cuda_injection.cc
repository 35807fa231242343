// The CUDA driver's entry point: CUDA_INJECTION64_PATH names this library, and the driver calls
// InitializeInjection once, in cuInit, in every process that uses CUDA.
#include "inject/cupti_activity.h"
#include "inject/session.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    if (auto* session = gpuscope::inject::Session::get("cuda")) {
      gpuscope::inject::start_cupti(*session);
    }
  } catch (...) {
  }
  return 1;
}
