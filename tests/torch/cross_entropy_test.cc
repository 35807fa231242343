// fused_cross_entropy (fused_cross_entropy.h) against ATen's cross-entropy: the loss and the
// gradient, in every logit type, with ignored rows, NaN and -inf logits. The kernel's cases need
// a CUDA device (they run on the GPU machine; CI skips them); the switch and the fallback run
// everywhere.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "fused_cross_entropy.h"
#include "run_config.h"
#include "synthetic_data.h"

namespace gpuscope::workloads {
namespace {

struct Reference {
  at::Tensor loss;
  at::Tensor grad;
};

// at::cross_entropy_loss on a copy (fp32 math, as autocast runs it), and its gradient.
Reference aten(const at::Tensor& logits, const at::Tensor& target, double grad_scale) {
  const at::Tensor x = logits.detach().to(at::kFloat).requires_grad_(true);
  const at::Tensor loss = at::cross_entropy_loss(x, target);
  (loss * grad_scale).backward();
  return {loss.detach(), x.grad()};
}

struct Fused {
  at::Tensor loss;
  at::Tensor grad;
};

Fused fused(const at::Tensor& logits, const at::Tensor& target, double grad_scale) {
  // A leaf's output, as the head's logits are: the kernel overwrites the buffer it is given.
  const at::Tensor leaf = logits.detach().clone().requires_grad_(true);
  const at::Tensor x = leaf * 1;
  const at::Tensor loss = fused_cross_entropy(x, target);
  (loss * grad_scale).backward();
  return {loss.detach(), leaf.grad()};
}

TEST(CrossEntropy, MatchesAtenInEveryLogitType) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device: the GPU cases need one";
  torch::manual_seed(11);
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  // GPT-2's vocabulary (rows start at every alignment), ViT's 1000 classes (16-byte aligned
  // rows) and a row shorter than one vector. Incoming gradient 1 (the backward has nothing to
  // do) and 4 (a loss scale).
  for (const int64_t vocab : {50257, 1000, 7}) {
    const int64_t rows = 37;
    at::Tensor target = torch::randint(vocab, {rows}, cuda.dtype(torch::kLong));
    target[3] = -100;  // ignored
    target[5] = -100;
    const at::Tensor logits = torch::randn({rows, vocab}, cuda) * 3;
    for (const auto type : {torch::kFloat, torch::kHalf, torch::kBFloat16}) {
      for (const double grad_scale : {1.0, 4.0}) {
        const at::Tensor x = logits.to(type);
        const Reference want = aten(x, target, grad_scale);
        const Fused got = fused(x, target, grad_scale);
        const double tolerance = type == torch::kFloat ? 1e-5 : 1e-2;
        EXPECT_EQ(got.loss.scalar_type(), torch::kFloat);
        EXPECT_NEAR(got.loss.item<double>(), want.loss.item<double>(), tolerance * 10)
            << vocab << " " << type;
        // Gradient entries are (p - onehot) * scale / 35: compared in units of that factor.
        const double unit = grad_scale / 35.0;
        const double worst = (got.grad.to(torch::kFloat) - want.grad).abs().max().item<double>();
        EXPECT_LT(worst / unit, tolerance) << vocab << " " << type << " x" << grad_scale;
        EXPECT_EQ(got.grad.select(0, 3).abs().sum().item<double>(), 0.0);  // ignored row
      }
    }
  }
}

TEST(CrossEntropy, NanLogitsGiveANanLossAndMinusInfinityAddsNothing) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  const at::Tensor target = torch::tensor({int64_t{0}, int64_t{1}}, cuda.dtype(torch::kLong));
  at::Tensor x = torch::zeros({2, 4}, cuda);
  x[1][3] = -std::numeric_limits<float>::infinity();
  // Row 0: log(4); row 1: log(3) (the -inf logit has probability 0).
  const double want = (std::log(4.0) + std::log(3.0)) / 2;
  EXPECT_NEAR(fused(x, target, 1.0).loss.item<double>(), want, 1e-6);
  x[0][2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(fused(x, target, 1.0).loss.item<double>()));
}

TEST(CrossEntropy, TakesOnlyWhatTheKernelCan) {
  const at::Tensor target = torch::zeros({4}, torch::kLong);
  EXPECT_FALSE(fused_cross_entropy_fits(torch::randn({4, 10}), target));  // on the CPU
  if (!torch::cuda::is_available()) return;
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  const at::Tensor t = target.to(torch::kCUDA);
  EXPECT_TRUE(fused_cross_entropy_fits(torch::randn({4, 10}, cuda), t));
  EXPECT_FALSE(fused_cross_entropy_fits(torch::randn({10, 4}, cuda).t(), t));  // strided
  EXPECT_FALSE(fused_cross_entropy_fits(torch::randn({4, 10}, cuda.dtype(torch::kDouble)), t));
  EXPECT_FALSE(fused_cross_entropy_fits(torch::randn({4, 10}, cuda), t.to(torch::kInt)));
  EXPECT_FALSE(fused_cross_entropy_fits(torch::randn({5, 10}, cuda), t));
}

TEST(CrossEntropy, ModelLossFallsBackToAtenWhereTheKernelCannotRun) {
  torch::manual_seed(2);
  const at::Tensor logits = torch::randn({2, 3, 50});
  const at::Tensor target = torch::randint(50, {2, 3});
  const double plain = model_loss(ModelKind::gpt2, logits, target, false).item<double>();
  EXPECT_DOUBLE_EQ(model_loss(ModelKind::gpt2, logits, target, true).item<double>(), plain);
  EXPECT_NEAR(plain,
              at::cross_entropy_loss(logits.reshape({6, 50}), target.reshape({6})).item<double>(),
              1e-6);
}

TEST(CrossEntropy, SwitchResolvesPerModelTaskAndDevice) {
  RunConfig c;
  c.model = ModelKind::gpt2;
  c.task = Task::train;
  EXPECT_TRUE(resolve_switches(c, /*on_cuda=*/true).fused_loss);
  EXPECT_FALSE(resolve_switches(c, /*on_cuda=*/false).fused_loss);
  c.task = Task::guard;
  EXPECT_TRUE(resolve_switches(c, true).fused_loss);
  c.task = Task::infer;
  EXPECT_FALSE(resolve_switches(c, true).fused_loss);  // no loss
  c.task = Task::train;
  c.fused_loss = Toggle::off;
  EXPECT_FALSE(resolve_switches(c, true).fused_loss);
  c.model = ModelKind::vit_b16;
  c.fused_loss = Toggle::automatic;
  EXPECT_FALSE(resolve_switches(c, true).fused_loss);
  c.fused_loss = Toggle::on;
  EXPECT_TRUE(resolve_switches(c, true).fused_loss);
}

}  // namespace
}  // namespace gpuscope::workloads
