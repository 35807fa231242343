#include "models/fp8_linear.h"

#include <ATen/cuda/CUDAContext.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/layers.h"

namespace gpuscope::workloads {
namespace {

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  return ((got.to(at::kDouble) - want.to(at::kDouble)).norm() / want.to(at::kDouble).norm())
      .item<double>();
}

TEST(Fp8Linear, Fits) {
  EXPECT_TRUE(fp8_linear_fits(768, 2304));
  EXPECT_FALSE(fp8_linear_fits(768, 1000));  // ViT's head stays in bf16
  EXPECT_FALSE(fp8_linear_fits(50257, 768));
}

// e4m3 keeps 3 mantissa bits: each product is off by a few percent, the sums by less.
// 197 rows: not a multiple of 16, so the padding path runs too.
void expect_forward_and_backward_track_fp32(const at::Device& device, at::ScalarType x_dtype) {
  torch::manual_seed(3);
  const auto on = at::TensorOptions().device(device);
  const auto x = torch::randn({197, 64}, on).to(x_dtype).requires_grad_();
  const auto w = (torch::randn({48, 64}, on) * 0.05).requires_grad_();
  const auto b = torch::randn({48}, on.requires_grad(true));
  const auto x_ref = x.detach().to(at::kFloat).clone().requires_grad_();
  const auto w_ref = w.detach().clone().requires_grad_();
  const auto b_ref = b.detach().clone().requires_grad_();

  const auto y = fp8_linear(x, w, b, at::kBFloat16);
  const auto y_ref = at::linear(x_ref, w_ref, b_ref);
  ASSERT_EQ(y.sizes(), y_ref.sizes());
  EXPECT_EQ(y.scalar_type(), at::kBFloat16);
  EXPECT_LT(relative_error(y, y_ref), 0.08);

  const auto g = torch::randn({197, 48}, on);
  y.backward(g.to(at::kBFloat16));
  y_ref.backward(g);
  EXPECT_EQ(x.grad().scalar_type(), x_dtype);
  EXPECT_LT(relative_error(x.grad(), x_ref.grad()), 0.15);
  EXPECT_LT(relative_error(w.grad(), w_ref.grad()), 0.15);
  EXPECT_LT(relative_error(b.grad(), b_ref.grad()), 0.02);
}

TEST(Fp8Linear, ForwardAndBackwardTrackFp32) {
  expect_forward_and_backward_track_fp32(at::kCPU, at::kFloat);
}

TEST(Fp8Linear, WithoutBias) {
  torch::manual_seed(6);
  const auto x = torch::randn({32, 64}, torch::requires_grad());
  const auto w = (torch::randn({48, 64}) * 0.05).requires_grad_();
  const auto y = fp8_linear(x, w, at::Tensor(), at::kFloat);
  EXPECT_LT(relative_error(y, at::linear(x, w)), 0.08);
  y.sum().backward();
  EXPECT_TRUE(w.grad().defined());
}

// On CUDA the quantization is gpuscope-torch's own kernel (scale, cast and transpose in one
// pass), for fp32 inputs (LayerNorm's output under autocast) and bf16 ones (GELU's).
TEST(Fp8Linear, CudaKernelsTrackFp32) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto properties = at::cuda::getCurrentDeviceProperties();
  if (properties->major * 10 + properties->minor < 89) GTEST_SKIP() << "fp8 GEMMs need 8.9+";
  expect_forward_and_backward_track_fp32(at::kCUDA, at::kFloat);
  expect_forward_and_backward_track_fp32(at::kCUDA, at::kBFloat16);
  // The same numbers as the CPU's ATen route, up to where bf16 rounded x * scale there.
  torch::manual_seed(5);
  const auto x = torch::randn({197, 64});
  const auto w = torch::randn({48, 64}) * 0.05;
  torch::NoGradGuard no_grad;
  const auto cpu = fp8_linear(x, w, at::Tensor(), at::kFloat);
  const auto cuda = fp8_linear(x.cuda(), w.cuda(), at::Tensor(), at::kFloat).cpu();
  EXPECT_LT(relative_error(cuda, cpu), 1e-3);
}

TEST(Fp8Linear, DenseQuantizesWeightsOnceForInference) {
  auto options = std::make_shared<LayerOptions>();
  options->fp8 = true;
  Dense dense(64, 32, true, options, /*fp8_capable=*/true);
  const auto x = torch::randn({3, 5, 64});
  at::Tensor y_fp8;
  {
    torch::NoGradGuard no_grad;
    y_fp8 = dense->forward(x);
    EXPECT_TRUE(torch::equal(dense->forward(x), y_fp8));  // same cached weight
  }
  options->fp8 = false;
  const auto y = dense->forward(x).detach();
  EXPECT_EQ(y_fp8.sizes(), y.sizes());
  EXPECT_LT(relative_error(y_fp8, y), 0.08);
}

}  // namespace
}  // namespace gpuscope::workloads
