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

Target whole_gpu(const GpuInfo& gpu) {
  Target t;
  t.label = fmt::format("GPU {}", gpu.index);
  t.gpu_index = gpu.index;
  t.gpu_name = gpu.name;
  t.gpu_uuid = gpu.uuid;
  t.pci_bus_id = gpu.pci_bus_id;
  // The UUID, not the index: CUDA numbers GPUs by speed unless CUDA_DEVICE_ORDER says
  // otherwise, so NVML's index 1 need not be CUDA's device 1.
  t.visible_devices = gpu.uuid;
  t.peak = gpu.peak;
  if (gpu.peak && gpu.peak->estimated) t.peak_note = "estimated peak (not in the datasheet table)";
  t.gpm_supported = gpu.gpm_supported.value_or(false);
  t.energy_counter = gpu.energy_counter_supported;
  return t;
}

Target mig_instance(const GpuInfo& gpu, const MigInstanceInfo& instance) {
  Target t = whole_gpu(gpu);
  t.label = fmt::format("GPU {} MIG {} (GI {} CI {})", gpu.index,
                        instance.profile.empty() ? "instance" : instance.profile,
                        instance.gpu_instance_id, instance.compute_instance_id);
  t.mig = MigSlice{instance.gpu_instance_id,
                   instance.compute_instance_id,
                   instance.profile,
                   instance.name,
                   instance.uuid,
                   instance.sm_count,
                   instance.memory_total_bytes};
  t.visible_devices = instance.uuid;
  t.peak.reset();
  t.peak_note.clear();
  // A slice has a share of the SMs, so a share of the compute peak. Memory bandwidth follows
  // the memory slices instead, which NVML does not tell: no memory peak for an instance.
  if (gpu.peak && gpu.sm_count && *gpu.sm_count > 0 && instance.sm_count) {
    PeakRates share = *gpu.peak;
    const double fraction = static_cast<double>(*instance.sm_count) / *gpu.sm_count;
    for (auto& [precision, rate] : share.flops_per_s) rate *= fraction;
    share.memory_bandwidth_bytes_per_s.reset();
    t.peak = share;
    t.peak_note = fmt::format("the GPU's peak x {}/{} SMs", *instance.sm_count, *gpu.sm_count);
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

std::string info_selector(const std::string& gpu) {
  return gpu.starts_with("MIG-") ? std::string() : gpu;
}

Result<Plan> plan(const SystemInfo& info, const std::string& gpu) {
  const bool mig_selector = gpu.starts_with("MIG-");
  Plan plan;
  std::vector<std::string> empty_mig;
  for (const GpuInfo& g : info.gpus) {
    if (!g.mig_current.value_or(false)) {
      if (!mig_selector) plan.targets.push_back(whole_gpu(g));
      continue;
    }
    if (g.mig_instances.empty()) empty_mig.push_back(fmt::format("GPU {} ({})", g.index, g.name));
    for (const MigInstanceInfo& instance : g.mig_instances) {
      if (mig_selector && instance.uuid != gpu) continue;
      plan.targets.push_back(mig_instance(g, instance));
    }
  }
  if (!plan.targets.empty()) return plan;
  if (mig_selector) {
    return Status(Code::not_found, fmt::format("no MIG instance has the UUID {}", gpu));
  }
  if (!empty_mig.empty()) {
    return Status(Code::no_device,
                  fmt::format("{} is in MIG mode without any MIG instance to run on; create one "
                              "(nvidia-smi mig -cgi ... -C) or turn MIG mode off",
                              empty_mig.front()));
  }
  return Status(Code::no_device, "no GPU to burn");
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
