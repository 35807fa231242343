// What a command measures or runs on: a whole GPU or one MIG instance of it, and the one way a
// `--gpu` selector becomes such targets (info, monitor, burn, bench, study, trace, sweep).
//
//   Target            NVML index and UUID of the GPU (the parent of a MIG instance), the MIG
//                     instance's UUID and ids, name, memory and SMs of the target itself, and
//                     the UUID a child process gets in CUDA_VISIBLE_DEVICES.
//   selectors         "N" (NVML index, as nvidia-smi), "GPU-..." (a GPU's UUID), "MIG-..."
//                     (an instance's UUID), "all", or a comma-separated list of them. One rule
//                     everywhere: an empty selector, or an empty entry in a list ("0," or
//                     "0,,1"), is an error, never a quiet "every GPU".
//   list_targets()    every GPU NVML sees and, after a GPU in MIG mode, its instances
//   resolve_targets() selectors -> targets, in NVML order, each once
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope {

namespace nvml {
class Session;
}

// A compute instance inside a MIG GPU instance.
struct MigPlacement {
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  std::string uuid;     // "MIG-...": what CUDA_VISIBLE_DEVICES takes
  std::string profile;  // "3g.20gb" (from the name); empty when the name has none
};

struct Target {
  unsigned gpu_index = 0;  // NVML index of the GPU; for a MIG instance, of its parent GPU
  std::string gpu_uuid;    // "GPU-...", the parent's for a MIG instance
  std::string gpu_name;    // "NVIDIA A100-SXM4-40GB"
  std::optional<std::string> pci_bus_id;  // the GPU's
  // Set for a MIG instance; absent for a whole GPU.
  std::optional<MigPlacement> mig;
  // The target's own name, memory and SMs: the GPU's, or the instance's
  // ("NVIDIA A100-SXM4-40GB MIG 3g.20gb", its slice of memory, its SMs). Absent where NVML does
  // not tell (a whole GPU's SM count comes from CUDA, not NVML).
  std::string name;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<unsigned> sm_count;
  // A whole GPU with MIG mode on: CUDA can run only on its instances, not on the GPU itself.
  bool mig_mode = false;
  // Not ok: NVML lists this GPU but could not open it (lost, ...); only gpu_index is known.
  Status unavailable;

  bool is_mig() const { return mig.has_value(); }
  // The target's own UUID: the instance's "MIG-...", else the GPU's "GPU-...". The value for
  // CUDA_VISIBLE_DEVICES (a UUID, not an index: CUDA numbers GPUs by speed unless
  // CUDA_DEVICE_ORDER says otherwise).
  const std::string& uuid() const { return mig ? mig->uuid : gpu_uuid; }
  // "GPU 0", or "GPU 0 MIG 3g.20gb (GI 1 CI 0)" ("MIG instance" without a profile).
  std::string label() const;
};

// "3g.20gb" from "NVIDIA A100-SXM4-40GB MIG 3g.20gb"; empty if the name has no profile.
std::string mig_profile_from_name(std::string_view name);

// The entries of one --gpu value: "0,GPU-ab" -> {"0", "GPU-ab"}; "all" -> {"all"}.
// invalid_argument, in the words every command prints:
//   ""            "an empty GPU selector; omit --gpu to use every GPU"
//   "0," ",0" "0,,1"  "an empty entry in the GPU list '0,'"
//   "cuda:0" ...  "'cuda:0' is not a GPU: give an NVML index (0, 1, ...), a UUID (GPU-... or
//                 MIG-...), a list of them or all"
// "all" inside a list ("0,all") means every GPU as well.
Result<std::vector<std::string>> split_gpu_selector(std::string_view selector);

// What the targets are for.
enum class TargetUse {
  // Reading or sampling a GPU (info, monitor): "N" and "GPU-..." name the GPU itself, in MIG
  // mode or not; "MIG-..." names the instance.
  observe,
  // Running work on it (burn, bench, study): a GPU in MIG mode stands for its instances, since
  // CUDA cannot use it whole.
  run,
};

// The targets `selectors` name among `available` (list_targets(), or a list of the same form
// made from recorded info). Each selector may be a list (split_gpu_selector); no selector at all,
// or "all", is every GPU. The result follows the order of `available` and holds each target
// once. A GPU whose `unavailable` is not ok is returned as it is (the caller reports or samples
// it as lost).
//
// Fails with invalid_argument for a malformed selector (see split_gpu_selector), not_found for
// an index or UUID that names nothing here ("there is no GPU 7 (this machine has 2 GPUs: 0..1)",
// "there is no GPU with UUID GPU-...", "no MIG instance has the UUID MIG-..."), and, for
// TargetUse::run, no_device when a selected GPU is in MIG mode without any instance (and
// nothing else is selected).
Result<std::vector<Target>> resolve_targets(std::span<const Target> available,
                                            std::span<const std::string> selectors, TargetUse use);

// Every GPU NVML lists, in index order, each followed (when its MIG mode is on) by its MIG
// instances. A GPU that cannot be opened or named is listed with only its index and
// `unavailable` set. Fails with the session's status when it cannot count GPUs, no_device when
// there is none. REQUIRES: `session` outlives nothing returned (targets are plain values).
Result<std::vector<Target>> list_targets(const nvml::Session& session);

}  // namespace gpuscope
