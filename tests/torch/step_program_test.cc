// The real training step (step_program.h) on a tiny classifier, so that fp16 autocast with
// dynamic loss scaling runs end to end on any CPU: emulated fp16 is slow only at large sizes.
#include "step_program.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace gpuscope::workloads {
namespace {

class TinyClassifier : public ReferenceModel {
 public:
  TinyClassifier() { fc_ = register_module("fc", torch::nn::Linear(3 * 8 * 8, 1000)); }
  at::Tensor forward(const at::Tensor& images) override { return fc_->forward(images.flatten(1)); }

 private:
  torch::nn::Linear fc_{nullptr};
};

struct Fixture {
  explicit Fixture(PrecisionMode mode, LossScalerOptions scaler = {}) {
    torch::manual_seed(0);
    model = std::make_shared<TinyClassifier>();
    config.model = ModelKind::vit_b16;  // a classification loss
    config.task = Task::train;
    config.mode = mode;
    config.device = "cpu";
    config.loss_scaler = scaler;
    config.adamw.lr = 1e-2;
    device = std::get<DeviceInfo>(open_device("cpu"));
    program = std::make_unique<StepProgram>(model, config, device);
    batch = Batch{torch::randn({4, 3, 8, 8}), torch::randint(1000, {4})};
  }
  at::Tensor weights() const { return model->parameters().front().detach().clone(); }

  std::shared_ptr<TinyClassifier> model;
  RunConfig config;
  DeviceInfo device;
  std::unique_ptr<StepProgram> program;
  Batch batch;
};

TEST(StepProgram, AnFp16OverflowSkipsTheStepAndBacksTheScaleOff) {
  LossScalerOptions huge;
  huge.init_scale = 1e30;  // the fp16 gradients overflow
  Fixture f(PrecisionMode::amp_fp16, huge);
  const auto before = f.weights();
  f.program->run_eager(f.batch);
  const LossScaler* scaler = f.program->loss_scaler();
  ASSERT_NE(scaler, nullptr);
  EXPECT_TRUE(torch::equal(f.weights(), before));  // skipped
  EXPECT_FLOAT_EQ(scaler->skipped_steps().item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(scaler->scale().item<float>(), 5e29f);
  EXPECT_TRUE(std::isfinite(f.program->last_loss().item<float>()));  // the loss itself is fine
}

TEST(StepProgram, AnFp16StepWithASaneScaleUpdatesAndGrows) {
  LossScalerOptions options;
  options.init_scale = 1024;
  options.growth_interval = 2;
  Fixture f(PrecisionMode::amp_fp16, options);
  const auto before = f.weights();
  f.program->run_eager(f.batch);
  EXPECT_FALSE(torch::equal(f.weights(), before));
  f.program->run_eager(f.batch);
  EXPECT_FLOAT_EQ(f.program->loss_scaler()->scale().item<float>(), 2048.0f);
  EXPECT_FLOAT_EQ(f.program->loss_scaler()->skipped_steps().item<float>(), 0.0f);
}

TEST(StepProgram, TrainingLowersTheLossOnAFixedBatch) {
  for (const PrecisionMode mode :
       {PrecisionMode::fp32, PrecisionMode::amp_bf16, PrecisionMode::amp_fp16}) {
    Fixture f(mode);
    f.program->run_eager(f.batch);
    const float first = f.program->last_loss().item<float>();
    for (int i = 0; i < 20; ++i) f.program->run_eager(f.batch);
    EXPECT_LT(f.program->last_loss().item<float>(), first * 0.5f) << precision_mode_name(mode);
    EXPECT_EQ(f.program->loss_scaler() != nullptr, mode == PrecisionMode::amp_fp16);
  }
}

TEST(StepProgram, LibTorchAdamWPathWithLossScaling) {
  Fixture f(PrecisionMode::amp_fp16);
  f.config.fused_adamw = false;
  StepProgram program(f.model, f.config, f.device);
  const auto before = f.weights();
  program.run_eager(f.batch);
  EXPECT_FALSE(torch::equal(f.weights(), before));
}

TEST(StepProgram, InferenceKeepsWeights) {
  Fixture f(PrecisionMode::bf16);
  f.config.task = Task::infer;
  StepProgram program(f.model, f.config, f.device);
  const auto before = f.weights();
  program.run_eager(f.batch);
  EXPECT_TRUE(torch::equal(f.weights(), before));
  EXPECT_FALSE(program.last_loss().defined());
}

// Records, at each forward, how many tensors still share the previous output's storage (the
// program's own reference included).
class OutputWatcher : public ReferenceModel {
 public:
  at::Tensor forward(const at::Tensor& images) override {
    previous_output_alive.push_back(last_.defined() && last_.use_count() > 1);
    at::Tensor out = images.flatten(1).sum(1, /*keepdim=*/true).expand({-1, 1000}).contiguous();
    last_ = out;
    return out;
  }
  std::vector<bool> previous_output_alive;

 private:
  at::Tensor last_;
};

TEST(StepProgram, InferenceLetsThePreviousLogitsGoBeforeTheNextForward) {
  Fixture f(PrecisionMode::fp32);
  f.config.task = Task::infer;
  auto watcher = std::make_shared<OutputWatcher>();
  StepProgram program(watcher, f.config, f.device);
  for (int i = 0; i < 3; ++i) program.run_eager(f.batch);
  // Held through the next forward, GPT-2's logits (3.3 GB at batch 32) were there twice.
  EXPECT_EQ(watcher->previous_output_alive, (std::vector<bool>{false, false, false}));
  ASSERT_TRUE(program.current_output().defined());
  EXPECT_EQ(program.current_output().size(1), 1000);
}

}  // namespace
}  // namespace gpuscope::workloads
