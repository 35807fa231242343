// gpuscope-burn-worker: burn's engine on one CUDA device, for `gpuscope burn` to run once per
// GPU or MIG instance. JSON lines on stdout (the protocol: PROTOCOL.md beside this file),
// messages for people on stderr. SIGINT/SIGTERM stop at the next window boundary; what was
// measured is still printed (the current precision's result marked partial).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "capability/burn_json.h"
#include "gpuscope/capability.h"
#include "gpuscope/interconnect.h"
#include "worker_options.h"

namespace {

using namespace gpuscope;
using namespace gpuscope::capability;
using namespace gpuscope::burn_worker;

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) {
  g_stop.store(true);
}

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal ends the process the usual way
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stopping() {
  return g_stop.load();
}

void emit(const BurnJson& line) {
  const std::string text = line.dump() + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// The outcome so far, from which the exit code follows.
struct Outcome {
  bool verification_failed = false;
  bool gpu_lost = false;          // the CUDA context is unusable: nothing more can run
  int other_exit_code = kExitOk;  // the first other failure's
  int exit_code() const {
    if (verification_failed) return kExitCheckFailed;
    if (gpu_lost) return kExitGpuLost;
    if (other_exit_code != kExitOk) return other_exit_code;
    if (stopping()) return kExitInterrupted;
    return kExitOk;
  }
};

// A failed call: skipped (the device cannot, or memory is short), or an error.
void report_failure(std::string_view what, const Status& status, const DeviceInfo& device,
                    std::optional<Precision> precision, Outcome& outcome) {
  if (status.code() == Code::not_supported || status.code() == Code::out_of_memory) {
    emit(skipped_json(what, status));
    fmt::print(stderr, "gpuscope-burn-worker: {} skipped: {}\n", what, status.to_string());
    return;
  }
  emit(error_json(code_name(status.code()), status.message(), &device, precision));
  fmt::print(stderr, "gpuscope-burn-worker: {} failed on {}: {}\n", what, device_label(device),
             status.to_string());
  if (status.code() == Code::gpu_lost) {
    outcome.gpu_lost = true;
  } else if (outcome.other_exit_code == kExitOk) {
    outcome.other_exit_code = exit_code_for(status.code());
  }
}

void burn_precision(Precision precision, const WorkerOptions& o, const DeviceInfo& device,
                    Outcome& outcome) {
  GemmBurnOptions options;
  options.precision = precision;
  options.n = o.size;
  options.duration_seconds = o.duration_seconds;
  options.window_seconds = o.window_seconds;
  options.memory_fraction = o.memory_fraction;
  options.algorithm_candidates = o.algorithm_candidates;
  options.seed = o.seed;
  if (o.inject_fault) options.inject_fault_after_seconds = o.inject_fault_after_seconds;
  options.should_stop = stopping;
  options.on_window = [&](const GemmWindow& window) {
    emit(gemm_window_json(precision, window));
    emit(progress_json(precision, window.elapsed_seconds,
                       std::min(1.0, window.elapsed_seconds / o.duration_seconds)));
  };
  fmt::print(stderr, "gpuscope-burn-worker: {} n={} for {} s ...\n", precision_name(precision),
             o.size, o.duration_seconds);
  Result<GemmBurnResult> result = run_gemm_burn(options);
  if (!result.ok()) {
    report_failure(precision_name(precision), result.status(), device, precision, outcome);
    return;
  }
  emit(gemm_result_json(*result));
  const Verification& v = result->verification;
  fmt::print(stderr,
             "gpuscope-burn-worker: {} {:.1f} TFLOP/s (median of {} windows{}), {} GEMMs "
             "checked: {} mismatches, {} NaN, {} Inf, {}/{} reference tiles failed\n",
             precision_name(precision), result->flop_per_second.median * 1e-12,
             result->flop_per_second.count, result->partial ? ", partial" : "", v.gemms_checked,
             v.mismatches, v.nan_count, v.inf_count, v.reference_tiles_failed,
             v.reference_tiles_checked);
  if (!v.ok()) {
    outcome.verification_failed = true;
    const std::string message = fmt::format(
        "{} GEMM verification failed on {}: {} mismatching elements, {} NaN, {} Inf, {} of {} "
        "reference tiles out of tolerance (max error {:.3g}, limit {:.3g}){}",
        precision_name(precision), device_label(device), v.mismatches, v.nan_count, v.inf_count,
        v.reference_tiles_failed, v.reference_tiles_checked, v.reference_max_error,
        v.reference_tolerance, result->fault_injected ? " [a fault was injected on purpose]" : "");
    emit(error_json("verification_failed", message, &device, precision));
    fmt::print(stderr, "gpuscope-burn-worker: ERROR: {}\n", message);
  }
}

void measure_memory(const WorkerOptions& o, const DeviceInfo& device, Outcome& outcome) {
  MemoryBandwidthOptions options;
  options.memory_fraction = o.memory_fraction;
  options.should_stop = stopping;
  Result<std::vector<MemoryBandwidthResult>> results = measure_memory_bandwidth(options);
  if (!results.ok()) return report_failure("memory", results.status(), device, {}, outcome);
  for (const MemoryBandwidthResult& r : *results) {
    emit(memory_bw_json(r));
    fmt::print(stderr, "gpuscope-burn-worker: memory {} {:.0f} GB/s\n",
               memory_kernel_name(r.kernel), r.bytes_per_second() * 1e-9);
  }
}

void measure_link(const WorkerOptions& o, const DeviceInfo& device, Outcome& outcome) {
  HostLinkOptions options;
  options.min_bytes = o.host_link_min_bytes;
  options.max_bytes = o.host_link_max_bytes;
  options.should_stop = stopping;
  options.on_result = [](const HostLinkResult& r) { emit(host_link_json(r)); };
  Result<std::vector<HostLinkResult>> results = measure_host_link(options);
  if (!results.ok()) return report_failure("host_link", results.status(), device, {}, outcome);
  if (stopping()) return;
  OverlapOptions overlap;
  overlap.copy_bytes = std::min<std::uint64_t>(overlap.copy_bytes, o.host_link_max_bytes);
  overlap.should_stop = stopping;
  Result<std::vector<OverlapResult>> overlaps = measure_copy_compute_overlap(overlap);
  if (!overlaps.ok()) return report_failure("overlap", overlaps.status(), device, {}, outcome);
  for (const OverlapResult& r : *overlaps) {
    emit(overlap_json(r));
    fmt::print(stderr, "gpuscope-burn-worker: overlap ({}) efficiency {:.2f}\n",
               host_memory_name(r.memory), r.efficiency());
  }
}

// --interconnect: all visible GPUs at once; one line per measurement, then done.
int measure_interconnect_lines(const WorkerOptions& o, const DeviceInfo& device) {
  InterconnectOptions options;
  options.max_bytes = o.interconnect_max_bytes;
  options.on_all_reduce = [](const AllReduceResult& r) {
    emit(all_reduce_json(r));
    fmt::print(stderr, "gpuscope-burn-worker: all-reduce {} GPUs {:.0f} MiB: busbw {:.1f} GB/s\n",
               r.gpus, static_cast<double>(r.bytes) / (1 << 20), r.bus_bandwidth * 1e-9);
  };
  options.on_peer_copy = [](const PeerCopyResult& r) {
    emit(peer_copy_json(r));
    fmt::print(stderr, "gpuscope-burn-worker: copy GPU {} -> GPU {} ({}): {:.1f} GB/s\n", r.source,
               r.destination, r.peer_access ? "peer" : "staged", r.bandwidth * 1e-9);
  };
  Result<InterconnectResult> result = measure_interconnect(options);
  Outcome outcome;
  if (!result.ok()) {
    report_failure("interconnect", result.status(), device, {}, outcome);
  } else if (result->all_reduce_status) {
    report_failure("all_reduce", *result->all_reduce_status, device, {}, outcome);
  }
  const int exit_code = outcome.exit_code();
  emit(done_json(exit_code == kExitOk, false, exit_code));
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handlers();
  const ParsedArgs parsed = parse_worker_args(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.options) {
    if (parsed.exit_code == kExitOk) {
      std::fputs(parsed.message.c_str(), stdout);
    } else {
      emit(error_json(code_name(Code::invalid_argument), parsed.message, nullptr, {}));
      fmt::print(stderr, "gpuscope-burn-worker: {}\n", parsed.message);
    }
    return parsed.exit_code;
  }
  const WorkerOptions& o = *parsed.options;

  Result<DeviceInfo> device = query_device();
  if (!device.ok()) {
    const int exit_code = exit_code_for(device.code());
    emit(error_json(code_name(device.code()), device.status().message(), nullptr, {}));
    emit(done_json(false, false, exit_code));
    fmt::print(stderr, "gpuscope-burn-worker: {}\n", device.status().to_string());
    return exit_code;
  }
  emit(device_json(*device));
  fmt::print(stderr, "gpuscope-burn-worker: {} (compute capability {}.{}, {} SMs)\n",
             device_label(*device), device->cc_major, device->cc_minor, device->sm_count);

  if (o.list) {
    for (const PrecisionSupport& s : precision_support(*device)) emit(precision_support_json(s));
    emit(done_json(true, false, kExitOk));
    return kExitOk;
  }

  if (o.interconnect) return measure_interconnect_lines(o, *device);

  Outcome outcome;
  for (Precision p : o.precisions) {
    if (stopping() || outcome.gpu_lost) break;
    burn_precision(p, o, *device, outcome);
  }
  if (o.memory && !stopping() && !outcome.gpu_lost) measure_memory(o, *device, outcome);
  if (o.host_link && !stopping() && !outcome.gpu_lost) measure_link(o, *device, outcome);

  const int exit_code = outcome.exit_code();
  emit(done_json(exit_code == kExitOk || exit_code == kExitInterrupted, stopping(), exit_code));
  return exit_code;
}
