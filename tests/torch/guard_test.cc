// The convergence guard (--task guard) and a host-fed run, on the CPU through run_workload: the
// guard's fp32 loss falls, the same seed gives the same data, initialization and first loss, and
// a host-fed run that is interrupted ends with a partial result instead of hanging.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <numeric>

#include "guard_data.h"
#include "runner.h"
#include "workload_outcome.h"

namespace gpuscope::workloads {
namespace {

using nlohmann::json;

using testing::Outcome;
using testing::run;

RunConfig tiny_guard(PrecisionMode mode) {
  RunConfig c;
  c.model = ModelKind::resnet50;
  c.task = Task::guard;
  c.mode = mode;
  c.device = "cpu";
  c.batch = 8;
  c.shape.image_size = 32;
  c.guard_steps = 8;
  c.adamw.lr = 1e-3;
  c.seed = 5;
  c.quiet = true;
  return c;
}

std::vector<double> losses_of(const Outcome& out) {
  const json* result = out.find("result");
  if (result == nullptr) return {};
  std::vector<double> values;
  for (const auto& v : (*result)["loss"]["values"]) {
    values.push_back(v.is_null() ? std::nan("") : v.get<double>());
  }
  return values;
}

double mean(const std::vector<double>& v, size_t from, size_t to) {
  return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(from),
                         v.begin() + static_cast<std::ptrdiff_t>(to), 0.0) /
         static_cast<double>(to - from);
}

TEST(GuardData, SameSeedSameDataAndLabelsFollowTheInput) {
  BatchSpec spec;
  spec.model = ModelKind::resnet50;
  spec.shape.image_size = 32;
  spec.batch = 16;
  const auto a = make_guard_batches(spec, 3, at::Device(at::kCPU));
  const auto b = make_guard_batches(spec, 3, at::Device(at::kCPU));
  const auto c = make_guard_batches(spec, 4, at::Device(at::kCPU));
  ASSERT_EQ(a.size(), static_cast<size_t>(kGuardBatches));
  EXPECT_TRUE(at::equal(a[0].input, b[0].input));
  EXPECT_TRUE(at::equal(a[3].target, b[3].target));
  EXPECT_FALSE(at::equal(a[0].input, c[0].input));
  EXPECT_LT(a[0].target.max().item<int64_t>(), kGuardClasses);

  spec.model = ModelKind::gpt2;
  spec.shape.seq_len = 10;
  const auto tokens = make_guard_batches(spec, 3, at::Device(at::kCPU));
  const at::Tensor expected = (tokens[0].input * 5 + 3).remainder(256);
  EXPECT_TRUE(at::equal(tokens[0].target, expected)) << "each token determines the next";
}

TEST(Guard, Fp32LossFallsAndTheSeedFixesTheFirstStep) {
  const Outcome first = run(tiny_guard(PrecisionMode::fp32));
  ASSERT_EQ(first.exit_code, kTorchExitOk) << first.lines.back().dump();
  const json* start = first.find("start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ((*start)["task"], "guard");
  EXPECT_EQ((*start)["options"]["guard_steps"], 8);
  EXPECT_EQ(first.find("window"), nullptr) << "the guard has no timing windows";
  const json& result = *first.find("result");
  EXPECT_TRUE(result["loss_scale_values"].is_null()) << "fp32 has no loss scale";
  EXPECT_GT(result["seconds"].get<double>(), 0);

  const std::vector<double> losses = losses_of(first);
  ASSERT_EQ(losses.size(), 8u);
  for (const double loss : losses) ASSERT_TRUE(std::isfinite(loss));
  EXPECT_LT(mean(losses, 5, 8), mean(losses, 0, 3) - 0.5)
      << "the guard's task must be learnable: loss " << losses.front() << " -> " << losses.back();

  RunConfig again = tiny_guard(PrecisionMode::fp32);
  again.guard_steps = 2;
  const std::vector<double> second = losses_of(run(again));
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0], losses[0]);
  EXPECT_EQ(second[1], losses[1]);
}

TEST(Guard, RefusesAHostFedInput) {
  RunConfig c = tiny_guard(PrecisionMode::fp32);
  c.input.kind = InputKind::host;
  const Outcome out = run(c);
  EXPECT_EQ(out.exit_code, kTorchExitUsage);
  ASSERT_NE(out.find("error"), nullptr);
}

TEST(HostFedRun, InterruptedRunEndsWithAPartialResult) {
  RunConfig c;
  c.model = ModelKind::gpt2;
  c.task = Task::train;
  c.mode = PrecisionMode::fp32;
  c.device = "cpu";
  c.batch = 1;
  c.shape.seq_len = 8;
  c.warmup_steps = 0;
  c.windows = 1000;
  c.steps_per_window = 1;
  c.input.kind = InputKind::host;
  c.input.loader_workers = 3;
  c.quiet = true;
  std::atomic<bool> stop{false};
  const Outcome out = run(c, &stop, "window");
  EXPECT_EQ(out.exit_code, kTorchExitInterrupted);
  const json* result = out.find("result");
  ASSERT_NE(result, nullptr);
  EXPECT_TRUE((*result)["partial"].get<bool>());
  EXPECT_EQ((*result)["loader_batches"], 1);
  EXPECT_EQ((*result)["h2d_bytes"], 2 * 8 * 8);
  const json* start = out.find("start");
  EXPECT_EQ((*start)["options"]["input"], "host");
  EXPECT_FALSE((*start)["options"]["pinned"].get<bool>()) << "no pinned memory on the CPU";
  EXPECT_FALSE((*start)["notes"].empty());
}

}  // namespace
}  // namespace gpuscope::workloads
