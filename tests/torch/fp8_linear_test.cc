#include "models/fp8_linear.h"

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
TEST(Fp8Linear, ForwardAndBackwardTrackFp32) {
  torch::manual_seed(3);
  // 197 rows: not a multiple of 16, so the padding path runs too.
  const auto x = torch::randn({197, 64}, torch::requires_grad());
  const auto w = (torch::randn({48, 64}) * 0.05).requires_grad_();
  const auto b = torch::randn({48}, torch::requires_grad());
  const auto x_ref = x.detach().clone().requires_grad_();
  const auto w_ref = w.detach().clone().requires_grad_();
  const auto b_ref = b.detach().clone().requires_grad_();

  const auto y = fp8_linear(x, w, b, at::kBFloat16);
  const auto y_ref = at::linear(x_ref, w_ref, b_ref);
  ASSERT_EQ(y.sizes(), y_ref.sizes());
  EXPECT_EQ(y.scalar_type(), at::kBFloat16);
  EXPECT_LT(relative_error(y, y_ref), 0.08);

  const auto g = torch::randn({197, 48});
  y.backward(g.to(at::kBFloat16));
  y_ref.backward(g);
  EXPECT_EQ(x.grad().scalar_type(), at::kFloat);
  EXPECT_LT(relative_error(x.grad(), x_ref.grad()), 0.15);
  EXPECT_LT(relative_error(w.grad(), w_ref.grad()), 0.15);
  EXPECT_LT(relative_error(b.grad(), b_ref.grad()), 0.02);
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
