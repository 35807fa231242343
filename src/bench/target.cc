// Which GPU or MIG instance a bench runs on, from its --gpu selector.
#include <fmt/format.h>

#include "gpuscope/bench.h"
#include "gpuscope/nvml.h"
#include "gpuscope/target.h"

namespace gpuscope::bench {

Status choose_target(const nvml::Session* session, const std::string& gpu, RunOptions& o) {
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> entries, split_gpu_selector(gpu));
  if (session == nullptr) {
    // Without NVML nothing can be looked up: an index is taken as CUDA's (PCI bus order).
    if (entries.size() != 1 || entries[0] == "all" || entries[0].starts_with("GPU-") ||
        entries[0].starts_with("MIG-")) {
      return Status(Code::invalid_argument,
                    fmt::format("--gpu {}: without NVML only a GPU index can be used", gpu));
    }
    if (entries[0].size() > 9) {
      return Status(Code::not_found, fmt::format("there is no GPU {}", entries[0]));
    }
    o.gpu = static_cast<unsigned>(std::stoul(entries[0]));
    o.mig.reset();
    return {};
  }
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<Target> available, list_targets(*session));
  const std::vector<std::string> selectors = {gpu};
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<Target> chosen,
                            resolve_targets(available, selectors, TargetUse::run));
  if (chosen.size() != 1) {
    std::string names;
    for (const Target& t : chosen)
      names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", t.label(), t.uuid());
    return Status(Code::invalid_argument,
                  fmt::format("--gpu {}: bench runs on one GPU or MIG instance, and this names "
                              "{}: {}; pick one",
                              gpu, chosen.size(), names));
  }
  o.gpu = chosen[0].gpu_index;
  if (chosen[0].mig) {
    o.mig = chosen[0];
  } else {
    o.mig.reset();
  }
  return {};
}

}  // namespace gpuscope::bench
