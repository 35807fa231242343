// Running gpuscope as the trace and diagnose CLI tests do: the fake NVML playing two GPUs
// (telemetry/two_gpus.json), the injection library of the build tree, one scratch folder.
#pragma once

#include <string>

#include "support/cli_run.h"

namespace gpuscope::testing {

// The environment (KEY=VALUE ...) the tests run gpuscope in.
inline std::string tracing_env() {
  return fake_nvml_env("telemetry/two_gpus.json") +
         " GPUSCOPE_INJECT_LIBRARY=" + GPUSCOPE_INJECT_LIB;
}

// The tests' scratch folder (a test process names its files after its PID).
inline std::string tracing_scratch() {
  return scratch_dir("cli_tracing");
}

// A folder path in tracing_scratch() for this test process with nothing there yet (not made).
inline std::string fresh_tracing_dir(const std::string& name) {
  return fresh_path(tracing_scratch(), name);
}

// Runs `gpuscope ARGS` in tracing_env(), as run_gpuscope() does, capturing in tracing_scratch().
inline CliRun tracing_gpuscope(const std::string& args) {
  return run_gpuscope(tracing_scratch(), tracing_env(), args);
}

}  // namespace gpuscope::testing
