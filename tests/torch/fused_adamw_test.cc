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

// Stepping in parts (a data-parallel run's buckets, each as its all-reduce ends) is the same
// update as one step, to the bit, for parameters of two dtypes split across the parts.
TEST(FusedAdamW, StepsInPartsAreTheWholeStepToTheBit) {
  torch::manual_seed(3);
  std::vector<at::Tensor> initial, whole, parted;
  const std::vector<std::pair<std::vector<int64_t>, at::ScalarType>> shapes{{{7, 5}, at::kFloat},
                                                                            {{13}, at::kBFloat16},
                                                                            {{65}, at::kFloat},
                                                                            {{4, 3}, at::kBFloat16},
                                                                            {{9}, at::kFloat}};
  for (const auto& [shape, dtype] : shapes) {
    const auto p = torch::randn(shape).to(dtype);
    initial.push_back(p);
    whole.push_back(p.clone().requires_grad_());
    parted.push_back(p.clone().requires_grad_());
  }
  AdamWOptions options;
  options.lr = 0.05;
  FusedAdamW one(whole, options);
  FusedAdamW split(parted, options);
  // Out of order, a dtype in two parts, a part of both dtypes.
  split.split({{4, 1}, {0}, {3, 2}});
  ASSERT_EQ(split.part_count(), 3u);
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < whole.size(); ++i) {
      const auto g = torch::randn(whole[i].sizes()).to(whole[i].scalar_type());
      whole[i].mutable_grad() = g.clone();
      parted[i].mutable_grad() = g.clone();
    }
    one.step();
    split.begin_step();
    for (const size_t k : {2u, 0u, 1u}) split.step_part(k);
  }
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_FALSE(torch::equal(whole[i].detach(), initial[i])) << "parameter " << i << " moved";
    EXPECT_TRUE(torch::equal(parted[i].detach(), whole[i].detach())) << "parameter " << i;
  }
  EXPECT_FLOAT_EQ(split.step_count().item<float>(), 3.0f);
}

TEST(FusedAdamW, PartsMustCoverEachParameterOnce) {
  auto a = torch::randn({4}).requires_grad_();
  auto b = torch::randn({4}).requires_grad_();
  FusedAdamW fused({a, b}, AdamWOptions{});
  EXPECT_THROW(fused.begin_step(), c10::Error) << "before split()";
  EXPECT_THROW(fused.split({{0}}), c10::Error) << "b in no part";
  EXPECT_THROW(fused.split({{0, 1}, {1}}), c10::Error) << "b twice";
  EXPECT_THROW(fused.split({{0, 2}}), c10::Error) << "no parameter 2";
  fused.split({{1}, {0}});
  EXPECT_EQ(fused.part_count(), 2u);
}

}  // namespace
}  // namespace gpuscope::workloads
