#include "precision_mode.h"

#include <ATen/autocast_mode.h>

#include <array>

#include "device.h"

namespace gpuscope::workloads {
namespace {

constexpr std::array<PrecisionModeInfo, 7> kModes = {{
    {PrecisionMode::fp32, "fp32", "fp32 everywhere; TF32 off in cuBLAS and cuDNN"},
    {PrecisionMode::tf32, "tf32", "fp32 tensors; GEMMs and convolutions on TF32 tensor cores"},
    {PrecisionMode::amp_fp16, "amp_fp16",
     "autocast fp16, fp32 master weights, dynamic loss scaling on the device"},
    {PrecisionMode::amp_bf16, "amp_bf16", "autocast bf16, fp32 master weights"},
    {PrecisionMode::fp16, "fp16", "pure fp16: model, optimizer state and inputs (.half())"},
    {PrecisionMode::bf16, "bf16", "pure bf16: model, optimizer state and inputs"},
    {PrecisionMode::fp8, "fp8",
     "experimental: AMP bf16, plus the transformer blocks' Linear GEMMs in float8 "
     "(e4m3 weights/activations, e5m2 gradients, per-tensor dynamic scales); compute "
     "capability 8.9+"},
}};

}  // namespace

std::span<const PrecisionModeInfo> precision_modes() {
  return kModes;
}

std::string_view precision_mode_name(PrecisionMode mode) {
  for (const auto& info : kModes) {
    if (info.mode == mode) return info.name;
  }
  return "unknown";
}

std::optional<PrecisionMode> parse_precision_mode(std::string_view name) {
  for (const auto& info : kModes) {
    if (info.name == name) return info.mode;
  }
  return std::nullopt;
}

PrecisionPlan plan_for(PrecisionMode mode) {
  PrecisionPlan plan;
  switch (mode) {
    case PrecisionMode::fp32:
      break;
    case PrecisionMode::tf32:
      plan.allow_tf32 = true;
      break;
    case PrecisionMode::amp_fp16:
      plan.autocast_dtype = at::kHalf;
      plan.loss_scaling = true;
      break;
    case PrecisionMode::amp_bf16:
      plan.autocast_dtype = at::kBFloat16;
      break;
    case PrecisionMode::fp16:
      plan.param_dtype = at::kHalf;
      break;
    case PrecisionMode::bf16:
      plan.param_dtype = at::kBFloat16;
      break;
    case PrecisionMode::fp8:
      plan.autocast_dtype = at::kBFloat16;
      plan.fp8_linear = true;
      break;
  }
  return plan;
}

std::optional<std::string> unsupported_reason(PrecisionMode mode, const DeviceInfo& device,
                                              bool model_supports_fp8) {
  if (mode == PrecisionMode::fp8 && !model_supports_fp8) {
    return "fp8 covers Linear layers only; this model's GEMMs are convolutions";
  }
  if (!device.is_cuda()) {
    if (mode == PrecisionMode::tf32) {
      return "tf32 is a CUDA tensor-core format; on the CPU this mode would equal fp32";
    }
    if ((mode == PrecisionMode::fp16 || mode == PrecisionMode::amp_fp16) &&
        !device.cpu_native_fp16) {
      return "this CPU has no fp16 arithmetic (AVX512-FP16 or AMX-FP16): LibTorch would "
             "emulate fp16 GEMMs, hundreds of times slower than fp32";
    }
    return std::nullopt;
  }
  if (mode == PrecisionMode::fp8 && device.compute_capability() < 89) {
    return "fp8 GEMMs need compute capability 8.9 or newer (this GPU is " +
           std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor) + ")";
  }
  if ((mode == PrecisionMode::bf16 || mode == PrecisionMode::amp_bf16) &&
      device.compute_capability() < 80) {
    return "bf16 needs compute capability 8.0 or newer";
  }
  return std::nullopt;
}

void apply_math_flags(const PrecisionPlan& plan) {
  auto& context = at::globalContext();
  const auto precision = plan.allow_tf32 ? at::Float32Precision::TF32 : at::Float32Precision::IEEE;
  context.setFloat32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL, precision);
  context.setFloat32Precision(at::Float32Backend::CUDA, at::Float32Op::CONV, precision);
}

AutocastScope::AutocastScope(const PrecisionPlan& plan, c10::DeviceType device_type)
    : device_type_(device_type) {
  if (!plan.autocast_dtype) return;
  active_ = true;
  previous_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_dtype(device_type_, *plan.autocast_dtype);
  at::autocast::set_autocast_enabled(device_type_, true);
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  at::autocast::set_autocast_enabled(device_type_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
  at::autocast::clear_cache();
}

}  // namespace gpuscope::workloads
