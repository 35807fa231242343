// Targets and the one selector rule: splitting a --gpu value, and resolving it against the
// targets a machine has. Nothing here calls NVML (list_targets() is in src/nvml/targets.cc).
#include "gpuscope/target.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Status malformed(std::string_view entry) {
  return Status(Code::invalid_argument,
                fmt::format("'{}' is not a GPU: give an NVML index (0, 1, ...), a UUID (GPU-... or "
                            "MIG-...), a list of them or all",
                            entry));
}

std::string no_such_index(std::string_view entry, std::size_t count) {
  return fmt::format("there is no GPU {} (this machine has {} GPU{}{})", entry, count,
                     count == 1 ? "" : "s", count == 0 ? "" : fmt::format(": 0..{}", count - 1));
}

// Marks what one entry names in `chosen` (indexes into `available`).
Status choose(std::span<const Target> available, std::string_view entry, TargetUse use,
              std::vector<bool>& chosen, std::vector<std::size_t>& empty_mig) {
  auto pick_gpu = [&](std::size_t i) {
    const Target& gpu = available[i];
    if (use == TargetUse::observe || !gpu.mig_mode) {
      chosen[i] = true;
      return;
    }
    bool any = false;
    for (std::size_t j = 0; j < available.size(); ++j) {
      if (available[j].mig && available[j].gpu_index == gpu.gpu_index) {
        chosen[j] = true;
        any = true;
      }
    }
    if (!any) empty_mig.push_back(i);
  };
  std::size_t gpus = 0;
  for (const Target& t : available) gpus += t.mig ? 0 : 1;
  if (entry == "all") {
    for (std::size_t i = 0; i < available.size(); ++i) {
      if (!available[i].mig) pick_gpu(i);
    }
    return {};
  }
  if (all_digits(entry)) {
    for (std::size_t i = 0; i < available.size(); ++i) {
      if (!available[i].mig && entry.size() <= 9 &&
          std::to_string(available[i].gpu_index) == std::string(entry)) {
        pick_gpu(i);
        return {};
      }
    }
    return Status(Code::not_found, no_such_index(entry, gpus));
  }
  const bool mig = entry.starts_with("MIG-");
  for (std::size_t i = 0; i < available.size(); ++i) {
    const Target& t = available[i];
    if (mig && t.mig && t.mig->uuid == entry) {
      chosen[i] = true;
      return {};
    }
    if (!mig && !t.mig && t.unavailable.ok() && t.gpu_uuid == entry) {
      pick_gpu(i);
      return {};
    }
  }
  return Status(Code::not_found, mig ? fmt::format("no MIG instance has the UUID {}", entry)
                                     : fmt::format("there is no GPU with UUID {}", entry));
}

}  // namespace

std::string Target::label() const {
  if (!mig) return fmt::format("GPU {}", gpu_index);
  return fmt::format("GPU {} MIG {} (GI {} CI {})", gpu_index,
                     mig->profile.empty() ? "instance" : mig->profile, mig->gpu_instance_id,
                     mig->compute_instance_id);
}

std::string mig_profile_from_name(std::string_view name) {
  const std::size_t pos = name.rfind(" MIG ");
  if (pos == std::string_view::npos) return {};
  return std::string(name.substr(pos + 5));
}

Result<std::vector<std::string>> split_gpu_selector(std::string_view selector) {
  if (selector.empty()) {
    return Status(Code::invalid_argument, "an empty GPU selector; omit --gpu to use every GPU");
  }
  std::vector<std::string> entries;
  std::string_view rest = selector;
  for (;;) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    if (entry.empty()) {
      return Status(Code::invalid_argument,
                    fmt::format("an empty entry in the GPU list '{}'", selector));
    }
    if (entry != "all" && !all_digits(entry) && !entry.starts_with("GPU-") &&
        !entry.starts_with("MIG-")) {
      return malformed(entry);
    }
    entries.emplace_back(entry);
    if (comma == std::string_view::npos) return entries;
    rest.remove_prefix(comma + 1);
  }
}

Result<std::vector<Target>> resolve_targets(std::span<const Target> available,
                                            std::span<const std::string> selectors, TargetUse use) {
  std::vector<std::string> entries;
  for (const std::string& selector : selectors) {
    GPUSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> split, split_gpu_selector(selector));
    entries.insert(entries.end(), split.begin(), split.end());
  }
  if (entries.empty()) entries.emplace_back("all");
  std::vector<bool> chosen(available.size(), false);
  std::vector<std::size_t> empty_mig;
  for (const std::string& entry : entries) {
    GPUSCOPE_RETURN_IF_ERROR(choose(available, entry, use, chosen, empty_mig));
  }
  std::vector<Target> targets;
  for (std::size_t i = 0; i < available.size(); ++i) {
    if (chosen[i]) targets.push_back(available[i]);
  }
  if (targets.empty() && !empty_mig.empty()) {
    const Target& gpu = available[empty_mig.front()];
    return Status(Code::no_device,
                  fmt::format("GPU {} ({}) is in MIG mode without any MIG instance to run on; "
                              "create one (nvidia-smi mig -cgi ... -C) or turn MIG mode off",
                              gpu.gpu_index, gpu.gpu_name));
  }
  if (targets.empty())
    return Status(Code::no_device, "the NVIDIA driver is loaded but lists no GPU");
  return targets;
}

}  // namespace gpuscope
