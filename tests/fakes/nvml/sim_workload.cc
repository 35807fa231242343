// gpuscope-sim-workload: a workload for the fake NVML's simulated GPUs (a scenario device with a
// "power_response"). It runs curve NAME on a GPU and prints, every --interval seconds, the
// speed that curve gives at the GPU's power limit now:
//
//   {"samples_per_second": 296.4}
//
// so `gpuscope sweep -- gpuscope-sim-workload --curve fp32_train` sweeps a simulated GPU end to
// end. It reads the limit through the fake it links (the state file GPUSCOPE_FAKE_NVML_STATE
// shares it with gpuscope). Ends on SIGINT/SIGTERM (exit 0) or after --seconds.
//
//   gpuscope-sim-workload --curve NAME [--gpu INDEX] [--interval S] [--seconds S]
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "fake_nvml_control.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) {
  g_stop = 1;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "gpuscope-sim-workload: %s\nusage: gpuscope-sim-workload --curve NAME [--gpu "
               "INDEX] [--interval S] [--seconds S]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string curve;
  unsigned gpu = 0;
  double interval_s = 0.1;
  double seconds = 0;  // 0: until stopped
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage(("missing value for " + arg).c_str());
    const char* value = argv[++i];
    if (arg == "--curve") {
      curve = value;
    } else if (arg == "--gpu") {
      gpu = static_cast<unsigned>(std::strtoul(value, nullptr, 10));
    } else if (arg == "--interval") {
      interval_s = std::strtod(value, nullptr);
    } else if (arg == "--seconds") {
      seconds = std::strtod(value, nullptr);
    } else {
      return usage(("unknown option " + arg).c_str());
    }
  }
  if (curve.empty()) return usage("--curve is required");
  if (!(interval_s > 0)) return usage("--interval must be positive");
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  if (gpuscope_fake_nvml_start_workload(gpu, curve.c_str(), static_cast<long>(::getpid())) != 0) {
    std::fprintf(stderr, "gpuscope-sim-workload: %s\n", gpuscope_fake_nvml_last_error());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration<double>(interval_s);
  for (long tick = 1; !g_stop; ++tick) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              period * static_cast<double>(tick)));
    if (g_stop) break;
    std::printf("{\"samples_per_second\": %.4f}\n",
                gpuscope_fake_nvml_workload_samples_per_second(gpu));
    std::fflush(stdout);
    if (seconds > 0 && interval_s * static_cast<double>(tick) >= seconds) break;
  }
  gpuscope_fake_nvml_stop_workload(gpu);
  return 0;
}
