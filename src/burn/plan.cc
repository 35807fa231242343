// Which workers to start: targets from `info`'s records, the worker program and its arguments.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "gpuscope/burn.h"

namespace gpuscope::burn {
namespace {

constexpr const char* kWorkerName = "gpuscope-burn-worker";

Target make_target(const gpuscope::Target& where, const GpuInfo& gpu) {
  Target t;
  static_cast<gpuscope::Target&>(t) = where;
  t.gpm_supported = gpu.gpm_supported.value_or(false);
  t.energy_counter = gpu.energy_counter_supported;
  if (!where.mig) {
    t.peak = gpu.peak;
    if (gpu.peak && gpu.peak->estimated)
      t.peak_note = "estimated peak (not in the datasheet table)";
    return t;
  }
  // A slice has a share of the SMs, so a share of the compute peak. Memory bandwidth follows
  // the memory slices instead, which NVML does not tell: no memory peak for an instance.
  if (gpu.peak && gpu.sm_count && *gpu.sm_count > 0 && where.sm_count) {
    PeakRates share = *gpu.peak;
    const double fraction = static_cast<double>(*where.sm_count) / *gpu.sm_count;
    for (auto& [precision, rate] : share.flops_per_s) rate *= fraction;
    share.memory_bandwidth_bytes_per_s.reset();
    t.peak = share;
    t.peak_note = fmt::format("the GPU's peak x {}/{} SMs", *where.sm_count, *gpu.sm_count);
  } else {
    t.peak_note = "no peak for a MIG instance without SM counts";
  }
  return t;
}

bool executable(const std::filesystem::path& path) {
  std::error_code ignored;
  return std::filesystem::is_regular_file(path, ignored) && access(path.c_str(), X_OK) == 0;
}

std::string number(double value) {
  return fmt::format("{}", value);  // shortest form that reads back the same: "3", "0.5"
}

}  // namespace

Result<Plan> plan(const SystemInfo& info, const std::string& gpu) {
  const std::vector<gpuscope::Target> available = targets_of(info);
  std::vector<std::string> selectors;
  if (!gpu.empty()) selectors.push_back(gpu);
  auto chosen = resolve_targets(available, selectors, TargetUse::run);
  if (!chosen.ok() && chosen.code() == Code::no_device && available.empty()) {
    return Status(Code::no_device, "no GPU to burn");
  }
  if (!chosen.ok()) return chosen.status();
  Plan plan;
  for (const gpuscope::Target& where : *chosen) {
    for (const GpuInfo& g : info.gpus) {
      if (g.index == where.gpu_index) plan.targets.push_back(make_target(where, g));
    }
  }
  return plan;
}

Result<std::string> locate_worker() {
  if (const char* env = std::getenv("GPUSCOPE_BURN_WORKER"); env != nullptr && *env != '\0') {
    if (executable(env)) return std::string(env);
    return Status(Code::not_found,
                  fmt::format("GPUSCOPE_BURN_WORKER={} is not an executable file", env));
  }
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    return Status(Code::not_found,
                  fmt::format("cannot find {}: /proc/self/exe is unreadable ({}); set "
                              "GPUSCOPE_BURN_WORKER to its path",
                              kWorkerName, error.message()));
  }
  const std::filesystem::path dir = self.parent_path();
  const std::vector<std::filesystem::path> candidates = {
      dir / kWorkerName, (dir / ".." / kWorkerName / kWorkerName).lexically_normal()};
  for (const auto& candidate : candidates) {
    if (executable(candidate)) return candidate.string();
  }
  return Status(Code::not_found,
                fmt::format("cannot find {} (looked at {} and {}); build it, or "
                            "set GPUSCOPE_BURN_WORKER to its path",
                            kWorkerName, candidates[0].string(), candidates[1].string()));
}

Result<std::vector<Precision>> parse_precisions(std::string_view text) {
  std::vector<Precision> precisions;
  if (text == "all") return precisions;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    const std::optional<Precision> p = parse_precision(name);
    if (!p) {
      return Status(Code::invalid_argument,
                    fmt::format("unknown precision '{}' (fp64, fp32, tf32, fp16, bf16, fp8, int8 "
                                "or all)",
                                name));
    }
    if (std::find(precisions.begin(), precisions.end(), *p) == precisions.end()) {
      precisions.push_back(*p);
    }
    if (comma == std::string_view::npos) return precisions;
    text.remove_prefix(comma + 1);
  }
}

std::vector<std::string> worker_arguments(const Options& options) {
  std::string precisions;
  for (Precision p : options.precisions) {
    if (!precisions.empty()) precisions += ",";
    precisions += precision_name(p);
  }
  std::vector<std::string> args = {"--precision", precisions.empty() ? "all" : precisions,
                                   "--duration", number(options.duration_seconds)};
  if (options.size) {
    args.insert(args.end(), {"--size", std::to_string(*options.size)});
  }
  if (options.memory_fraction) {
    args.insert(args.end(), {"--memory-fraction", number(*options.memory_fraction)});
  }
  if (options.memory) args.emplace_back("--memory");
  if (options.host_link) args.emplace_back("--host-link");
  if (options.inject_fault) args.emplace_back("--inject-fault");
  return args;
}

}  // namespace gpuscope::burn
