#include "fused_adamw.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace gpuscope::workloads {
namespace {

// The fused update must equal LibTorch's torch::optim::AdamW, step for step.
TEST(FusedAdamW, MatchesLibTorchAdamW) {
  torch::manual_seed(1);
  const AdamWOptions options{/*lr=*/1e-2, 0.9, 0.999, /*weight_decay=*/0.05, 1e-8};
  std::vector<at::Tensor> ours, theirs;
  // Sizes that are no multiple of the state buffer's alignment, and a channels-last weight (the
  // moments share one buffer, each laid out as its parameter).
  for (const auto& shape :
       std::vector<std::vector<int64_t>>{{7, 5}, {13}, {3, 4, 2}, {4, 3, 2, 5}, {65}}) {
    auto p = torch::randn(shape);
    if (p.dim() == 4) p = p.contiguous(at::MemoryFormat::ChannelsLast);
    ours.push_back(p.clone().requires_grad_());
    theirs.push_back(p.clone().requires_grad_());
  }
  FusedAdamW fused(ours, options);
  torch::optim::AdamW reference(theirs, torch::optim::AdamWOptions(options.lr)
                                            .betas({options.beta1, options.beta2})
                                            .weight_decay(options.weight_decay)
                                            .eps(options.eps));
  for (int step = 0; step < 4; ++step) {
    for (size_t i = 0; i < ours.size(); ++i) {
      // Laid out as the parameter, as autograd lays out a parameter's gradient.
      const auto g = torch::randn(ours[i].sizes()).contiguous(ours[i].suggest_memory_format());
      ours[i].mutable_grad() = g.clone();
      theirs[i].mutable_grad() = g.clone();
    }
    fused.step();
    reference.step();
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_TRUE(torch::allclose(ours[i], theirs[i], 1e-5, 1e-6)) << "parameter " << i;
  }
  EXPECT_TRUE(ours[3].is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_FLOAT_EQ(fused.step_count().item<float>(), 4.0f);
}

TEST(FusedAdamW, SkipsTheStepWhenFoundInfIsSet) {
  auto p = torch::randn({10}).requires_grad_();
  FusedAdamW fused({p}, AdamWOptions{});
  p.mutable_grad() = torch::randn({10});
  const auto before = p.detach().clone();
  fused.step(torch::ones({}));
  EXPECT_TRUE(torch::equal(p.detach(), before));
  EXPECT_FLOAT_EQ(fused.step_count().item<float>(), 0.0f);
  fused.step(torch::zeros({}));
  EXPECT_FALSE(torch::equal(p.detach(), before));
  EXPECT_FLOAT_EQ(fused.step_count().item<float>(), 1.0f);
}

TEST(FusedAdamW, GroupsParametersByDtypeAndDropsGradients) {
  auto a = torch::randn({4}).requires_grad_();
  auto b = torch::randn({4}, torch::kBFloat16).requires_grad_();
  AdamWOptions options;
  options.lr = 0.1;  // a step bf16 can see
  FusedAdamW fused({a, b}, options);
  a.mutable_grad() = torch::ones({4});
  b.mutable_grad() = torch::ones({4}, torch::kBFloat16);
  const auto b_before = b.detach().clone();
  fused.step();
  EXPECT_FALSE(torch::equal(b.detach(), b_before));
  EXPECT_EQ(fused.grads().size(), 2u);
  fused.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

}  // namespace
}  // namespace gpuscope::workloads
