#include "precision_mode.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "device.h"

namespace gpuscope::workloads {
namespace {

DeviceInfo cuda_device(int major, int minor) {
  DeviceInfo d;
  d.device = at::Device(at::kCUDA, 0);
  d.cc_major = major;
  d.cc_minor = minor;
  return d;
}

TEST(PrecisionMode, NamesRoundTrip) {
  EXPECT_EQ(precision_modes().size(), 7u);
  for (const auto& info : precision_modes()) {
    EXPECT_EQ(parse_precision_mode(info.name), info.mode);
    EXPECT_EQ(precision_mode_name(info.mode), info.name);
  }
  EXPECT_FALSE(parse_precision_mode("fp64").has_value());
}

TEST(PrecisionMode, Plans) {
  EXPECT_EQ(plan_for(PrecisionMode::fp32).param_dtype, at::kFloat);
  EXPECT_FALSE(plan_for(PrecisionMode::fp32).allow_tf32);
  EXPECT_FALSE(plan_for(PrecisionMode::fp32).autocast_dtype.has_value());
  EXPECT_TRUE(plan_for(PrecisionMode::tf32).allow_tf32);
  EXPECT_EQ(plan_for(PrecisionMode::amp_fp16).autocast_dtype, at::kHalf);
  EXPECT_TRUE(plan_for(PrecisionMode::amp_fp16).loss_scaling);
  EXPECT_EQ(plan_for(PrecisionMode::amp_bf16).autocast_dtype, at::kBFloat16);
  EXPECT_FALSE(plan_for(PrecisionMode::amp_bf16).loss_scaling);
  EXPECT_EQ(plan_for(PrecisionMode::fp16).param_dtype, at::kHalf);
  EXPECT_FALSE(plan_for(PrecisionMode::fp16).autocast_dtype.has_value());
  EXPECT_EQ(plan_for(PrecisionMode::bf16).param_dtype, at::kBFloat16);
  EXPECT_TRUE(plan_for(PrecisionMode::fp8).fp8_linear);
  EXPECT_EQ(plan_for(PrecisionMode::fp8).autocast_dtype, at::kBFloat16);
}

// Through LibTorch's fp32-precision API (the one torch.backends.*.fp32_precision sets); mixing
// it with the legacy allow_tf32 flags is an error in torch 2.11.
TEST(PrecisionMode, Fp32TurnsTf32OffInCublasAndCudnn) {
  const auto& context = at::globalContext();
  const auto matmul = [&] {
    return context.float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL);
  };
  const auto conv = [&] {
    return context.float32Precision(at::Float32Backend::CUDA, at::Float32Op::CONV);
  };
  apply_math_flags(plan_for(PrecisionMode::tf32));
  EXPECT_EQ(matmul(), at::Float32Precision::TF32);
  EXPECT_EQ(conv(), at::Float32Precision::TF32);
  EXPECT_TRUE(context.allowTF32CuDNN(at::Float32Op::CONV));
  apply_math_flags(plan_for(PrecisionMode::fp32));
  EXPECT_EQ(matmul(), at::Float32Precision::IEEE);
  EXPECT_EQ(conv(), at::Float32Precision::IEEE);
  EXPECT_FALSE(context.allowTF32CuDNN(at::Float32Op::CONV));
}

TEST(PrecisionMode, WhereModesRun) {
  DeviceInfo cpu;
  EXPECT_TRUE(unsupported_reason(PrecisionMode::tf32, cpu, true).has_value());
  for (auto mode :
       {PrecisionMode::fp32, PrecisionMode::amp_bf16, PrecisionMode::bf16, PrecisionMode::fp8}) {
    EXPECT_FALSE(unsupported_reason(mode, cpu, true).has_value()) << precision_mode_name(mode);
  }
  // fp16 on a CPU only where the CPU does fp16 arithmetic.
  EXPECT_TRUE(unsupported_reason(PrecisionMode::fp16, cpu, true).has_value());
  EXPECT_TRUE(unsupported_reason(PrecisionMode::amp_fp16, cpu, true).has_value());
  cpu.cpu_native_fp16 = true;
  EXPECT_FALSE(unsupported_reason(PrecisionMode::fp16, cpu, true).has_value());
  EXPECT_FALSE(unsupported_reason(PrecisionMode::amp_fp16, cpu, true).has_value());
  EXPECT_TRUE(unsupported_reason(PrecisionMode::fp8, cpu, false).has_value());  // ResNet-50
  EXPECT_FALSE(unsupported_reason(PrecisionMode::fp16, cuda_device(7, 0), true).has_value());
  EXPECT_TRUE(unsupported_reason(PrecisionMode::fp8, cuda_device(8, 0), true).has_value());
  EXPECT_FALSE(unsupported_reason(PrecisionMode::fp8, cuda_device(8, 9), true).has_value());
  EXPECT_FALSE(unsupported_reason(PrecisionMode::fp8, cuda_device(9, 0), true).has_value());
  EXPECT_TRUE(unsupported_reason(PrecisionMode::bf16, cuda_device(7, 5), true).has_value());
  EXPECT_FALSE(unsupported_reason(PrecisionMode::tf32, cuda_device(8, 0), true).has_value());
}

TEST(AutocastScope, EnablesForItsScopeOnlyAndRestores) {
  ASSERT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  {
    AutocastScope scope(plan_for(PrecisionMode::amp_bf16), at::kCPU);
    EXPECT_TRUE(at::autocast::is_autocast_enabled(at::kCPU));
    EXPECT_EQ(at::autocast::get_autocast_dtype(at::kCPU), at::kBFloat16);
    const auto w = torch::randn({8, 8}, torch::requires_grad());
    EXPECT_EQ(at::linear(torch::randn({2, 8}), w).scalar_type(), at::kBFloat16);
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  {
    AutocastScope none(plan_for(PrecisionMode::fp32), at::kCPU);
    EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  }
}

}  // namespace
}  // namespace gpuscope::workloads
