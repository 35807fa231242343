// gpuscope's process exit codes (documented in README.md; scripts branch on them).
#pragma once

#include "gpuscope/status.h"

namespace gpuscope {

enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,    // the work ran and found a problem (e.g. burn saw wrong results)
  kExitUsage = 2,          // bad arguments, or a GPU index/UUID that does not exist
  kExitNoGpu = 3,          // no NVIDIA driver, or a driver with no GPU
  kExitPermission = 4,     // the driver refused (needs root or a capability)
  kExitGpuLost = 5,        // a GPU stopped answering
  kExitError = 6,          // anything else (I/O, internal)
  kExitInterrupted = 130,  // Ctrl-C
  // A command gpuscope was asked to run (monitor -- CMD) could not be started; as a shell
  // answers. See command_exit_code() in process.h for the whole policy.
  kExitCommandNotExecutable = 126,  // found, but no permission, a directory, an unknown format
  kExitCommandNotFound = 127,       // no such file, not in $PATH, or an empty name
};

inline int exit_code_for(Code code) {
  switch (code) {
    case Code::ok:
      return kExitOk;
    case Code::invalid_argument:
    case Code::not_found:
      return kExitUsage;
    case Code::no_driver:
    case Code::no_device:
      return kExitNoGpu;
    case Code::permission_denied:
      return kExitPermission;
    case Code::gpu_lost:
      return kExitGpuLost;
    case Code::cancelled:
      return kExitInterrupted;
    default:
      return kExitError;
  }
}

}  // namespace gpuscope
