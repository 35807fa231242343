#include "worker_options.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace gpuscope::burn_worker {

Result<std::vector<Precision>> parse_precision_list(std::string_view text) {
  if (text == "all") return std::vector<Precision>(kAllPrecisions.begin(), kAllPrecisions.end());
  if (text == "none") return std::vector<Precision>{};
  std::vector<Precision> precisions;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    const std::optional<Precision> p = parse_precision(name);
    if (!p) {
      return Status(Code::invalid_argument,
                    fmt::format("unknown precision '{}' (fp64, fp32, tf32, fp16, bf16, fp8, "
                                "int8, all or none)",
                                name));
    }
    precisions.push_back(*p);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  if (precisions.empty()) return Status(Code::invalid_argument, "empty precision list");
  return precisions;
}

ParsedArgs parse_worker_args(const std::vector<std::string>& args) {
  WorkerOptions o;
  std::string precision_text = "all";
  CLI::App app{
      "gpuscope-burn-worker: burn's engine on the first visible CUDA device. Prints JSON lines "
      "on stdout (see PROTOCOL.md), messages on stderr.",
      "gpuscope-burn-worker"};
  app.add_option("--precision", precision_text, "precisions to burn: LIST, all or none")
      ->capture_default_str();
  app.add_option("--duration", o.duration_seconds, "seconds of timed GEMMs per precision")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--window", o.window_seconds, "seconds per timing window")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--size", o.size, "square GEMM size n (a multiple of 16, >= 64)")
      ->capture_default_str();
  app.add_option("--memory-fraction", o.memory_fraction,
                 "share of free device memory the buffers may take")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  app.add_option("--algorithms", o.algorithm_candidates, "cuBLASLt candidates to time")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_flag("--memory", o.memory, "measure device-memory bandwidth");
  app.add_flag("--host-link", o.host_link, "measure host<->device copies and copy/compute overlap");
  app.add_option("--host-link-min-bytes", o.host_link_min_bytes, "smallest host-link copy")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{16}, std::uint64_t{1} << 34));
  app.add_option("--host-link-max-bytes", o.host_link_max_bytes, "largest host-link copy")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{4096}, std::uint64_t{1} << 34));
  app.add_flag("--inject-fault", o.inject_fault,
               "corrupt one element of one GEMM result (tests the detection; exits 1)");
  app.add_option("--inject-fault-after", o.inject_fault_after_seconds,
                 "seconds into each precision's timed phase")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--list", o.list, "print the device and what it supports, then exit");
  app.add_flag("--interconnect", o.interconnect,
               "every visible GPU together: NCCL all-reduce bus bandwidth (1 MiB up to "
               "--interconnect-max-bytes) and peer-to-peer copies, then exit");
  app.add_option("--interconnect-max-bytes", o.interconnect_max_bytes, "largest all-reduce buffer")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1} << 20, std::uint64_t{1} << 34));
  app.add_option("--seed", o.seed, "seed of the random inputs")->capture_default_str();

  std::vector<const char*> argv{"gpuscope-burn-worker"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  ParsedArgs parsed;
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    parsed.message = app.help();
    return parsed;
  } catch (const CLI::ParseError& e) {
    parsed.exit_code = kExitUsage;
    parsed.message = e.what();
    return parsed;
  }
  if (o.size < 64 || o.size % 16 != 0) {
    parsed.exit_code = kExitUsage;
    parsed.message = fmt::format("--size {}: must be a multiple of 16 and at least 64", o.size);
    return parsed;
  }
  Result<std::vector<Precision>> precisions = parse_precision_list(precision_text);
  if (!precisions.ok()) {
    parsed.exit_code = kExitUsage;
    parsed.message = "--precision: " + precisions.status().message();
    return parsed;
  }
  if (o.host_link_min_bytes > o.host_link_max_bytes) {
    parsed.exit_code = kExitUsage;
    parsed.message = "--host-link-min-bytes is larger than --host-link-max-bytes";
    return parsed;
  }
  o.precisions = std::move(precisions).value();
  parsed.options = o;
  return parsed;
}

}  // namespace gpuscope::burn_worker
