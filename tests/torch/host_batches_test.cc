// Host-side batches (input/host_batches.h) and the input path's setup on the CPU
// (input/step_inputs.h): slot shapes, dtypes and layouts, the synthetic host producer, the
// pinned-memory fallback, and device batches refilled before each step.
#include "input/host_batches.h"

#include <gtest/gtest.h>

#include <set>

#include "input/augment.h"
#include "input/step_inputs.h"

namespace gpuscope::workloads {
namespace {

BatchSpec image_spec(ModelKind model, int64_t batch, at::ScalarType dtype, bool channels_last) {
  BatchSpec spec;
  spec.model = model;
  spec.shape.image_size = 32;
  spec.batch = batch;
  spec.image_dtype = dtype;
  spec.channels_last = channels_last;
  return spec;
}

TEST(HostBatches, SlotsAreLaidOutLikeTheDeviceBatch) {
  const auto vit = make_host_slot(image_spec(ModelKind::vit_b16, 2, at::kFloat, false), false);
  EXPECT_EQ(vit->input.sizes(), (std::vector<int64_t>{2, 3, 224, 224}));
  EXPECT_EQ(vit->target.sizes(), (std::vector<int64_t>{2}));
  EXPECT_TRUE(vit->input.is_contiguous());

  const auto resnet =
      make_host_slot(image_spec(ModelKind::resnet50, 3, at::kBFloat16, true), false);
  EXPECT_EQ(resnet->input.sizes(), (std::vector<int64_t>{3, 3, 32, 32}));
  EXPECT_EQ(resnet->input.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(resnet->input.is_contiguous(at::MemoryFormat::ChannelsLast));

  BatchSpec tokens;
  tokens.model = ModelKind::gpt2;
  tokens.batch = 2;
  tokens.shape.seq_len = 16;
  const auto gpt2 = make_host_slot(tokens, false);
  EXPECT_EQ(gpt2->input.sizes(), (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(gpt2->target.sizes(), (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(gpt2->input.scalar_type(), at::kLong);
}

TEST(HostBatches, SyntheticImagesAreNormalizedPixelsWithLabels) {
  const BatchSpec spec = image_spec(ModelKind::resnet50, 4, at::kFloat, false);
  const BatchProducer produce = synthetic_host_producer(spec, 7);
  auto a = make_host_slot(spec, false);
  auto b = make_host_slot(spec, false);
  auto c = make_host_slot(spec, false);
  produce(5, *a);
  produce(5, *b);
  produce(6, *c);
  EXPECT_TRUE(at::equal(a->input, b->input)) << "the same index must give the same batch";
  EXPECT_TRUE(at::equal(a->target, b->target));
  EXPECT_FALSE(at::equal(a->input, c->input));
  for (int64_t ch = 0; ch < 3; ++ch) {
    const at::Tensor plane = a->input.select(1, ch);
    const float low = -kImageNetMean[ch] / kImageNetStd[ch];
    const float high = (1.0f - kImageNetMean[ch]) / kImageNetStd[ch];
    EXPECT_GE(plane.min().item<float>(), low - 1e-5f);
    EXPECT_LE(plane.max().item<float>(), high + 1e-5f);
    // Uniform pixels: the mean sits near the middle of the range.
    EXPECT_NEAR(plane.mean().item<float>(), (low + high) / 2, 0.1f);
  }
  EXPECT_GE(a->target.min().item<int64_t>(), 0);
  EXPECT_LT(a->target.max().item<int64_t>(), 1000);
}

TEST(HostBatches, ChannelsLastBf16StoresTheSameImage) {
  const BatchSpec planar = image_spec(ModelKind::resnet50, 2, at::kFloat, false);
  const BatchSpec nhwc = image_spec(ModelKind::resnet50, 2, at::kBFloat16, true);
  auto a = make_host_slot(planar, false);
  auto b = make_host_slot(nhwc, false);
  synthetic_host_producer(planar, 3)(0, *a);
  synthetic_host_producer(nhwc, 3)(0, *b);
  EXPECT_TRUE(at::allclose(a->input, b->input.to(at::kFloat), 0.02, 0.02));
}

TEST(HostBatches, TokenTargetsAreTheNextToken) {
  BatchSpec spec;
  spec.model = ModelKind::gpt2;
  spec.batch = 2;
  spec.shape.seq_len = 12;
  auto slot = make_host_slot(spec, false);
  synthetic_host_producer(spec, 1)(0, *slot);
  EXPECT_TRUE(at::equal(slot->input.narrow(1, 1, 11), slot->target.narrow(1, 0, 11)));
  EXPECT_GE(slot->input.min().item<int64_t>(), 0);
  EXPECT_LT(slot->input.max().item<int64_t>(), 50257);
}

TEST(StepInputs, PinnedFallsBackToPageableOnTheCpu) {
  RunConfig config;
  config.input.kind = InputKind::host;
  config.input.pinned = true;
  const auto cpu = std::get<DeviceInfo>(open_device("cpu"));
  std::string note;
  EXPECT_FALSE(resolve_pinned(config, cpu, &note));
  EXPECT_NE(note.find("pageable"), std::string::npos) << note;
  config.input.pinned = false;
  note.clear();
  EXPECT_FALSE(resolve_pinned(config, cpu, &note));
  EXPECT_TRUE(note.empty());
}

TEST(StepInputs, HostInputRefillsTheDeviceBatchesBeforeEachStep) {
  RunConfig config;
  config.model = ModelKind::gpt2;
  config.input.kind = InputKind::host;
  config.input.loader_workers = 2;
  config.input_sets = 1;  // host-fed: raised to 2
  config.seed = 11;
  BatchSpec spec;
  spec.model = ModelKind::gpt2;
  spec.batch = 2;
  spec.shape.seq_len = 8;
  const auto cpu = std::get<DeviceInfo>(open_device("cpu"));
  StepInputs inputs(config, cpu, spec, false, std::nullopt);
  ASSERT_TRUE(inputs.host_fed());
  ASSERT_EQ(inputs.batches().size(), 2u);
  // With two workers the batches come in the order finished: step 5 may get index 6 while
  // index 5 is still being made. Any index a worker may have started is a valid batch.
  constexpr int64_t kIndices = 6 + 16;
  std::vector<at::Tensor> expected;
  for (int64_t i = 0; i < kIndices; ++i) {
    auto slot = make_host_slot(spec, false);
    synthetic_host_producer(spec, 11)(i, *slot);
    expected.push_back(slot->input);
  }
  std::set<int64_t> matched;
  for (int64_t step = 0; step < 6; ++step) {
    inputs.before_step(step);
    const at::Tensor& got = inputs.batches()[static_cast<size_t>(step) % 2].input;
    int64_t matches = 0;
    for (int64_t i = 0; i < kIndices; ++i) {
      if (at::equal(got, expected[static_cast<size_t>(i)])) {
        matched.insert(i);
        ++matches;
      }
    }
    EXPECT_EQ(matches, 1) << "step " << step << " must see one loader batch";
    inputs.after_step(step);
  }
  EXPECT_EQ(matched.size(), 6u) << "each step must see a batch of its own";
  const InputStats stats = inputs.stats();
  EXPECT_EQ(stats.batches, 6);
  EXPECT_EQ(stats.h2d_bytes, 6 * 2 * (2 * 8 * 8));  // input and target, int64
  EXPECT_GE(stats.wait_seconds_total, 0.0);
}

TEST(StepInputs, JpegChecksComeBeforeTheRun) {
  RunConfig config;
  config.input.kind = InputKind::jpeg;
  config.model = ModelKind::gpt2;
  auto checked = check_input(config);
  ASSERT_TRUE(std::holds_alternative<InputProblem>(checked));
  EXPECT_TRUE(std::get<InputProblem>(checked).skipped);
  EXPECT_EQ(std::get<InputProblem>(checked).code, "not_supported");

  config.model = ModelKind::resnet50;
  checked = check_input(config);
  ASSERT_TRUE(std::holds_alternative<InputProblem>(checked));
  const InputProblem& problem = std::get<InputProblem>(checked);
  if (problem.skipped) return;  // built without libjpeg
  EXPECT_EQ(problem.code, "invalid_argument");
  EXPECT_NE(problem.message.find("--data"), std::string::npos);

  config.input.data = "/nonexistent/gpuscope-images";
  checked = check_input(config);
  ASSERT_TRUE(std::holds_alternative<InputProblem>(checked));
  EXPECT_NE(std::get<InputProblem>(checked).message.find("no such directory"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::workloads
