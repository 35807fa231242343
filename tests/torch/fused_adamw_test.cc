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

// A data-parallel rank's sharded step: the parameters laid out in a flat buffer as a gradient
// bucket lays them out (each at a multiple of 64 elements, zeros between), cut into chunks, one
// through the middle of a parameter, each chunk updated on its own: FusedAdamW's whole step,
// and the padding stays zero. On the CPU the kernel's vector body and scalar tail round
// differently, so a parameter whose size is no multiple of the vector width matches closely,
// not to the bit; the others (and on CUDA all: bench/multi_device.sh ce) to the bit.
TEST(ShardedAdamW, ChunksOfAFlatBufferAreTheFusedStep) {
  torch::manual_seed(5);
  const std::vector<std::vector<int64_t>> shapes{{7, 5}, {13}, {64}, {4, 3, 2, 8}, {130}};
  std::vector<at::Tensor> whole;
  std::vector<int64_t> offsets;
  int64_t elements = 0;
  for (const auto& shape : shapes) {
    whole.push_back(torch::randn(shape).requires_grad_());
    offsets.push_back(elements);
    elements += (whole.back().numel() + 63) / 64 * 64;
  }
  ASSERT_EQ(elements, 576);
  at::Tensor flat = torch::zeros({elements});
  at::Tensor flat_grads = torch::zeros({elements});
  for (size_t i = 0; i < whole.size(); ++i) {
    flat.narrow(0, offsets[i], whole[i].numel()).copy_(whole[i].detach().reshape(-1));
  }
  AdamWOptions options;
  options.lr = 0.05;
  options.weight_decay = 0.1;
  FusedAdamW reference(whole, options);
  // Three ranks' chunks; the second ends in the middle of the 192-element parameter at 192.
  const std::vector<std::pair<int64_t, int64_t>> chunks{{0, 256}, {256, 128}, {384, 192}};
  std::vector<ShardedAdamW::Shard> shards;
  for (const auto& [begin, count] : chunks) shards.push_back({count, at::kFloat});
  ShardedAdamW sharded(shards, at::Device(at::kCPU), options);
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < whole.size(); ++i) {
      const auto g = torch::randn(whole[i].sizes());
      whole[i].mutable_grad() = g.clone();
      flat_grads.narrow(0, offsets[i], g.numel()).copy_(g.reshape(-1));
    }
    reference.step();
    sharded.begin_step();
    for (const size_t k : {2u, 0u, 1u}) {
      const auto [begin, count] = chunks[k];
      sharded.step_shard(k, flat.narrow(0, begin, count), flat_grads.narrow(0, begin, count));
    }
  }
  at::Tensor padding = torch::ones({elements}, torch::kBool);
  for (size_t i = 0; i < whole.size(); ++i) {
    const at::Tensor ours = flat.narrow(0, offsets[i], whole[i].numel());
    const at::Tensor theirs = whole[i].detach().reshape(-1);
    if (whole[i].numel() % 64 == 0) {
      EXPECT_TRUE(torch::equal(ours, theirs)) << "parameter " << i << " to the bit";
    } else {
      EXPECT_TRUE(torch::allclose(ours, theirs, 1e-6, 1e-7)) << "parameter " << i;
    }
    padding.narrow(0, offsets[i], whole[i].numel()).fill_(false);
  }
  EXPECT_EQ(flat.masked_select(padding).abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(sharded.state_bytes(), 2 * elements * 4);
  EXPECT_THROW(sharded.step_shard(0, flat.narrow(0, 0, 64), flat_grads.narrow(0, 0, 64)),
               c10::Error)
      << "a chunk of the wrong size";
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
