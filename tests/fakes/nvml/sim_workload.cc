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
//
// It also stands in for gpuscope-torch (`gpuscope sweep --torch-bin gpuscope-sim-workload`):
// given --mode and --task instead of --curve, it runs curve MODE_TASK (fp16 is the seed's
// `.half()`: half_train), ignores gpuscope-torch's other options, prints its lines as
// {"v": 1, "type": "window", "samples_per_second": X}, and a curve the scenario lacks is a
// precision mode this GPU lacks: {"type": "skipped", ...} and exit 3, as gpuscope-torch says it.
//
// And for the burn worker (GPUSCOPE_BURN_WORKER, `gpuscope sweep --burn P`): given --precision P
// it runs curve P_gemm, whose "samples per second" are TFLOP/s, printed as the worker's
// {"v": 1, "type": "gemm_window", "precision": P, "tflops": X} lines (a missing curve: skipped).
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
  double seconds = 0;      // 0: until stopped
  std::string mode, task;  // as gpuscope-torch
  std::string precision;   // as gpuscope-burn-worker
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quiet") continue;
    if (i + 1 >= argc) return usage(("missing value for " + arg).c_str());
    const char* value = argv[++i];
    if (arg == "--mode") {
      mode = value;
    } else if (arg == "--precision") {
      precision = value;
    } else if (arg == "--duration" || arg == "--window") {
      // the burn worker's: the sweep stops it
    } else if (arg == "--task") {
      task = value;
    } else if (arg == "--model" || arg == "--batch" || arg == "--windows" || arg == "--warmup" ||
               arg == "--steps" || arg == "--device") {
      // gpuscope-torch's: the curve stands for the whole workload
    } else if (arg == "--curve") {
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
  const bool as_worker = curve.empty() && !precision.empty();
  const bool as_torch = curve.empty() && !mode.empty();
  if (as_worker) curve = precision + "_gemm";
  if (as_torch) curve = (mode == "fp16" ? "half" : mode) + "_" + (task.empty() ? "train" : task);
  if (curve.empty()) return usage("--curve (or --mode) is required");
  if (!(interval_s > 0)) return usage("--interval must be positive");
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  if (gpuscope_fake_nvml_start_workload(gpu, curve.c_str(), static_cast<long>(::getpid())) != 0) {
    std::fprintf(stderr, "gpuscope-sim-workload: %s\n", gpuscope_fake_nvml_last_error());
    if (as_torch || as_worker) {
      std::printf(
          "{\"v\": 1, \"type\": \"skipped\", \"code\": \"not_supported\", \"reason\": "
          "\"this simulated GPU has no curve %s\"}\n",
          curve.c_str());
      return 3;
    }
    return 1;
  }
  // On stderr (which the sweep leaves to the terminal): tests count the processes started.
  std::fprintf(stderr, "gpuscope-sim-workload: pid %ld runs curve %s\n",
               static_cast<long>(::getpid()), curve.c_str());
  const auto start = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration<double>(interval_s);
  for (long tick = 1; !g_stop; ++tick) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              period * static_cast<double>(tick)));
    if (g_stop) break;
    const double rate = gpuscope_fake_nvml_workload_samples_per_second(gpu);
    if (as_worker) {
      std::printf(
          "{\"v\": 1, \"type\": \"gemm_window\", \"precision\": \"%s\", \"tflops\": %.4f}\n",
          precision.c_str(), rate);
    } else {
      std::printf(as_torch ? "{\"v\": 1, \"type\": \"window\", \"samples_per_second\": %.4f}\n"
                           : "{\"samples_per_second\": %.4f}\n",
                  rate);
    }
    std::fflush(stdout);
    if (seconds > 0 && interval_s * static_cast<double>(tick) >= seconds) break;
  }
  gpuscope_fake_nvml_stop_workload(gpu);
  return 0;
}
