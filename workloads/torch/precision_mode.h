// Precision modes of gpuscope-torch: what each one changes (parameter dtype, autocast, TF32,
// loss scaling, fp8 GEMMs), where it can run, and an RAII scope for autocast.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpuscope::workloads {

struct DeviceInfo;

enum class PrecisionMode { fp32, tf32, amp_fp16, amp_bf16, fp16, bf16, fp8 };

struct PrecisionModeInfo {
  PrecisionMode mode;
  std::string_view name;     // as on the command line and in JSON: "amp_bf16"
  std::string_view summary;  // one line for --help
};

// Every mode, in the order --help lists them.
std::span<const PrecisionModeInfo> precision_modes();
std::string_view precision_mode_name(PrecisionMode mode);
// Accepts the names above; nullopt for anything else.
std::optional<PrecisionMode> parse_precision_mode(std::string_view name);

// What a mode means for the code that builds and runs a model.
struct PrecisionPlan {
  at::ScalarType param_dtype = at::kFloat;       // parameters, optimizer state and inputs
  std::optional<at::ScalarType> autocast_dtype;  // AMP: ops autocast to this dtype
  bool allow_tf32 = false;    // TF32 tensor cores for fp32 GEMMs (cuBLAS) and convolutions (cuDNN)
  bool loss_scaling = false;  // dynamic loss scaling (fp16 AMP)
  bool fp8_linear = false;    // transformer Linear layers run their GEMMs in float8
};
PrecisionPlan plan_for(PrecisionMode mode);

// Why `mode` cannot run on `device` for a model (e.g. "tf32 is a CUDA tensor-core format"),
// or nullopt when it can. `model_supports_fp8`: the model has Linear layers that fp8 can take
// (false for ResNet-50, whose GEMMs are convolutions).
std::optional<std::string> unsupported_reason(PrecisionMode mode, const DeviceInfo& device,
                                              bool model_supports_fp8);

// Sets the process-wide math flags for a plan: TF32 on or off in cuBLAS *and* cuDNN (cuDNN
// defaults to on, so plain fp32 must turn it off), matmul precision "highest" or "high".
void apply_math_flags(const PrecisionPlan& plan);

// Autocast for one forward pass: enables autocast on `device_type` with the plan's dtype (a
// no-op when the plan has none) and on destruction restores the previous state and clears the
// weight-cast cache, so cast copies of the weights never outlive the forward that made them.
class AutocastScope {
 public:
  AutocastScope(const PrecisionPlan& plan, c10::DeviceType device_type);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_type_;
  bool active_ = false;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

}  // namespace gpuscope::workloads
