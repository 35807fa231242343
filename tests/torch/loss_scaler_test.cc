#include "loss_scaler.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "fused_adamw.h"

namespace gpuscope::workloads {
namespace {

float value(const at::Tensor& t) {
  return t.item<float>();
}

// A scaler from `init_scale` that grows after `growth_interval` clean steps.
LossScaler scaler_from(double init_scale, int64_t growth_interval) {
  LossScalerOptions options;
  options.init_scale = init_scale;
  options.growth_interval = growth_interval;
  return LossScaler(at::kCPU, options);
}

// One step's unscale and update, over gradients of ones or (an overflow) of infinities.
void unscale_and_update(LossScaler& scaler, bool overflow) {
  std::vector<at::Tensor> grads{overflow ? torch::full({2}, INFINITY) : torch::ones({2})};
  scaler.unscale(grads);
  scaler.update();
}

TEST(LossScaler, ScalesTheLossAndUnscalesGradients) {
  LossScaler scaler(at::kCPU, LossScalerOptions{});
  EXPECT_FLOAT_EQ(value(scaler.scale()), 65536.0f);
  EXPECT_FLOAT_EQ(value(scaler.scale_loss(torch::full({}, 2.0f))), 131072.0f);
  std::vector<at::Tensor> grads{torch::full({3}, 65536.0f), torch::full({2}, 131072.0f)};
  EXPECT_FLOAT_EQ(value(scaler.unscale(grads)), 0.0f);
  EXPECT_TRUE(torch::allclose(grads[0], torch::ones({3})));
  EXPECT_TRUE(torch::allclose(grads[1], torch::full({2}, 2.0f)));
}

TEST(LossScaler, OverflowSkipsTheStepAndBacksTheScaleOff) {
  auto p = torch::randn({6}).requires_grad_();
  FusedAdamW optimizer({p}, AdamWOptions{});
  LossScaler scaler(at::kCPU, LossScalerOptions{});
  auto grad = torch::randn({6});
  grad[2] = std::numeric_limits<float>::infinity();
  p.mutable_grad() = grad;
  const auto before = p.detach().clone();

  const at::Tensor& found_inf = scaler.unscale(optimizer.grads());
  EXPECT_FLOAT_EQ(value(found_inf), 1.0f);
  optimizer.step(found_inf);
  scaler.update();

  EXPECT_TRUE(torch::equal(p.detach(), before));     // step skipped
  EXPECT_FLOAT_EQ(value(scaler.scale()), 32768.0f);  // backed off by 0.5
  EXPECT_FLOAT_EQ(value(scaler.skipped_steps()), 1.0f);
  EXPECT_FLOAT_EQ(value(optimizer.step_count()), 0.0f);

  p.mutable_grad() = torch::full({6}, std::numeric_limits<float>::quiet_NaN());
  optimizer.step(scaler.unscale(optimizer.grads()));
  scaler.update();
  EXPECT_FLOAT_EQ(value(scaler.scale()), 16384.0f);  // NaN counts as overflow too
  EXPECT_FLOAT_EQ(value(scaler.skipped_steps()), 2.0f);
}

TEST(LossScaler, GrowsAfterTheIntervalOfCleanSteps) {
  LossScaler scaler = scaler_from(1024, 3);
  for (int step = 1; step <= 7; ++step) {
    unscale_and_update(scaler, false);
    const float expected = step < 3 ? 1024.0f : step < 6 ? 2048.0f : 4096.0f;
    EXPECT_FLOAT_EQ(value(scaler.scale()), expected) << "after step " << step;
  }
  EXPECT_FLOAT_EQ(value(scaler.skipped_steps()), 0.0f);
}

TEST(LossScaler, AnOverflowRestartsTheGrowthCount) {
  LossScaler scaler = scaler_from(1024, 2);
  unscale_and_update(scaler, false);
  unscale_and_update(scaler, true);  // 512, count reset
  unscale_and_update(scaler, false);
  EXPECT_FLOAT_EQ(value(scaler.scale()), 512.0f);
  unscale_and_update(scaler, false);
  EXPECT_FLOAT_EQ(value(scaler.scale()), 1024.0f);
}

}  // namespace
}  // namespace gpuscope::workloads
