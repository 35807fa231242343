// Data parallel on the CPU with Gloo: two ranks (threads of this process, each with its own
// process group) training a small model end with the same parameters as one process training on
// the doubled batch — the all-reduce, the averaging and the bucketing together.
#include "distributed/grad_buckets.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>

#include "distributed/data_parallel.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "fused_adamw.h"

namespace gpuscope::workloads {
namespace {

// These tests run two ranks as two threads of one process. PyTorch's flight recorder, one per
// process, looks up its process-group table before taking its lock (FlightRecorderDetail.hpp,
// torch 2.11): two groups recording at once from two threads corrupted it (a SIGSEGV in
// recordWithResetEnabled, about 1 run in 16 on a loaded host). Off before any group exists; one
// rank per process, as in real runs, never shares it.
const bool kFlightRecorderOff = [] { return setenv("TORCH_FR_BUFFER_SIZE", "0", 1) == 0; }();

constexpr int64_t kIn = 5, kHidden = 8, kClasses = 3, kRankBatch = 4, kSteps = 3;

// A two-layer perceptron in float64 (so that the comparison can be tight), its parameters in
// registration order: W1 [8,5], b1 [8], W2 [3,8], b2 [3].
std::vector<at::Tensor> initial_parameters() {
  at::manual_seed(7);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  return {at::randn({kHidden, kIn}, f64), at::randn({kHidden}, f64),
          at::randn({kClasses, kHidden}, f64), at::randn({kClasses}, f64)};
}

std::vector<at::Tensor> trainable_copy(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> copy;
  for (const auto& p : params) copy.push_back(p.clone().requires_grad_(true));
  return copy;
}

at::Tensor loss_of(const std::vector<at::Tensor>& p, const at::Tensor& x, const at::Tensor& y) {
  const at::Tensor hidden = at::relu(at::linear(x, p[0], p[1]));
  return at::cross_entropy_loss(at::linear(hidden, p[2], p[3]), y);
}

// The global batches of each step: 2 x kRankBatch rows; rank r takes rows [r*4, r*4+4).
std::vector<std::pair<at::Tensor, at::Tensor>> global_batches() {
  at::manual_seed(11);
  std::vector<std::pair<at::Tensor, at::Tensor>> out;
  for (int64_t s = 0; s < kSteps; ++s) {
    out.emplace_back(at::randn({2 * kRankBatch, kIn}, at::kDouble),
                     at::randint(kClasses, {2 * kRankBatch}, at::kLong));
  }
  return out;
}

AdamWOptions adamw() {
  AdamWOptions o;
  o.lr = 1e-2;
  return o;
}

// Two ranks (threads of this process), each training a copy of `init` on its half of every
// batch with its gradients averaged through GradientBuckets (2 buckets of ~100 bytes). Returns
// each rank's parameters at the end, and its gradients after the first step in `first_grads`.
struct TwoRanks {
  std::vector<std::vector<at::Tensor>> params{2};
  std::vector<std::vector<at::Tensor>> first_grads{2};
  std::vector<std::string> failures{2};
  std::vector<size_t> bucket_counts{2};
  std::vector<std::vector<at::ScalarType>> communicated{2};  // each bucket's all-reduce dtype
  std::vector<std::vector<size_t>> buckets_done{2};          // end_backward's on_bucket_done calls
};

TwoRanks train_two_ranks_once(const std::vector<at::Tensor>& init,
                              const std::vector<std::pair<at::Tensor, at::Tensor>>& batches,
                              bool views, std::optional<at::ScalarType> communication_dtype,
                              bool bucket_step) {
  TwoRanks out;
  const int port = free_port();
  const auto rank_main = [&](int rank) {
    try {
      LaunchEnv env;
      env.rank = rank;
      env.world_size = 2;
      env.local_rank = rank;
      env.master_port = port;
      env.launcher = "env";
      ProcessGroup group(env, at::Device(at::kCPU), std::chrono::seconds(30));
      auto params = trainable_copy(init);
      GradientBuckets buckets(params, group, 100, views, communication_dtype);
      out.bucket_counts[rank] = buckets.bucket_count();
      for (size_t b = 0; b < buckets.bucket_count(); ++b) {
        out.communicated[rank].push_back(buckets.communication_buffer(b).scalar_type());
      }
      FusedAdamW opt(params, adamw());
      if (bucket_step) {
        std::vector<std::vector<size_t>> parts;
        for (size_t b = 0; b < buckets.bucket_count(); ++b) {
          parts.push_back(buckets.bucket_members(b));
        }
        opt.split(parts);
      }
      for (const auto& [x, y] : batches) {
        opt.zero_grad();
        buckets.begin_backward();
        loss_of(params, x.narrow(0, rank * kRankBatch, kRankBatch),
                y.narrow(0, rank * kRankBatch, kRankBatch))
            .backward();
        if (bucket_step) {
          // As StepProgram does it: each bucket's parameters stepped as soon as it is averaged.
          opt.begin_step();
          buckets.end_backward([&](size_t b) {
            out.buckets_done[rank].push_back(b);
            opt.step_part(b);
          });
        } else {
          buckets.end_backward();
        }
        if (out.first_grads[rank].empty()) {
          for (const auto& p : params) out.first_grads[rank].push_back(p.grad().clone());
        }
        if (!bucket_step) opt.step();
      }
      out.params[rank] = params;
    } catch (const std::exception& e) {
      out.failures[rank] = e.what();
    }
  };
  std::thread r1(rank_main, 1);
  rank_main(0);
  r1.join();
  return out;
}

// As train_two_ranks_once, again on another port when the free port found was taken before
// rank 0's store could listen on it (EADDRINUSE: other tests run beside this one).
TwoRanks train_two_ranks(const std::vector<at::Tensor>& init,
                         const std::vector<std::pair<at::Tensor, at::Tensor>>& batches, bool views,
                         std::optional<at::ScalarType> communication_dtype = std::nullopt,
                         bool bucket_step = false) {
  TwoRanks out;
  for (int attempt = 0; attempt < 3; ++attempt) {
    out = train_two_ranks_once(init, batches, views, communication_dtype, bucket_step);
    if (out.failures[0].find("EADDRINUSE") == std::string::npos) break;
  }
  return out;
}

// The whole batch in one process: the parameters at the end.
std::vector<at::Tensor> train_one_process(
    const std::vector<at::Tensor>& init,
    const std::vector<std::pair<at::Tensor, at::Tensor>>& batches) {
  const auto single = trainable_copy(init);
  FusedAdamW single_adamw(single, adamw());
  for (const auto& [x, y] : batches) {
    single_adamw.zero_grad();
    loss_of(single, x, y).backward();
    single_adamw.step();
  }
  return single;
}

double max_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(GradientBuckets, TwoGlooRanksMatchOneProcessWithTheDoubledBatch) {
  if (!have_gloo()) GTEST_SKIP() << "built without Gloo's headers";
  const auto init = initial_parameters();
  const auto batches = global_batches();
  const auto single = train_one_process(init, batches);

  // Two ranks, half each, gradients averaged in two buckets: as views of the buckets (the
  // default) and copied back.
  for (const bool views : {true, false}) {
    SCOPED_TRACE(views ? "gradients as bucket views" : "copied back");
    const TwoRanks two = train_two_ranks(init, batches, views);
    ASSERT_EQ(two.failures[0], "");
    ASSERT_EQ(two.failures[1], "");
    EXPECT_EQ(two.bucket_counts[0], 2u);
    EXPECT_EQ(two.communicated[0], (std::vector<at::ScalarType>{at::kDouble, at::kDouble}));
    for (size_t i = 0; i < init.size(); ++i) {
      // The parameters moved, and both ranks hold the single process's values.
      EXPECT_GT(max_difference(single[i], init[i]), 1e-3) << i;
      for (int r = 0; r < 2; ++r) {
        EXPECT_LT(max_difference(two.params[r][i], single[i]), 1e-12)
            << "rank " << r << " parameter " << i;
      }
    }
  }
}

// The optimizer stepping each bucket's parameters as soon as that bucket is averaged (while a
// later bucket's all-reduce may still run) ends where stepping all after the last bucket does, to
// the bit, and is called for every bucket of every step, in order.
TEST(GradientBuckets, SteppingEachBucketAsItIsAveragedIsTheWholeStep) {
  if (!have_gloo()) GTEST_SKIP() << "built without Gloo's headers";
  const auto init = initial_parameters();
  const auto batches = global_batches();
  const TwoRanks whole = train_two_ranks(init, batches, true);
  const TwoRanks parted = train_two_ranks(init, batches, true, std::nullopt, true);
  for (const TwoRanks* two : {&whole, &parted}) {
    ASSERT_EQ(two->failures[0], "");
    ASSERT_EQ(two->failures[1], "");
  }
  ASSERT_EQ(parted.bucket_counts[0], 2u);
  const std::vector<size_t> every_step_in_order{0, 1, 0, 1, 0, 1};
  EXPECT_EQ(parted.buckets_done[0], every_step_in_order);
  EXPECT_EQ(parted.buckets_done[1], every_step_in_order);
  EXPECT_TRUE(whole.buckets_done[0].empty());
  for (size_t i = 0; i < init.size(); ++i) {
    EXPECT_GT(max_difference(parted.params[0][i], init[i]), 1e-3) << i;
    for (int r = 0; r < 2; ++r) {
      EXPECT_TRUE(parted.params[r][i].equal(whole.params[r][i]))
          << "rank " << r << " parameter " << i;
    }
  }
}

// The one-step gradients of rank `rank`'s half of the first batch, from `init`, in float64.
std::vector<at::Tensor> half_batch_gradients(const std::vector<at::Tensor>& init, int rank) {
  const auto params = trainable_copy(init);
  const auto [x, y] = global_batches().front();
  loss_of(params, x.narrow(0, rank * kRankBatch, kRankBatch),
          y.narrow(0, rank * kRankBatch, kRankBatch))
      .backward();
  std::vector<at::Tensor> grads;
  for (const auto& p : params) grads.push_back(p.grad().clone());
  return grads;
}

TEST(GradientBuckets, Bf16CommunicationIsDdpsBf16CompressHook) {
  if (!have_gloo()) GTEST_SKIP() << "built without Gloo's headers";
  const auto init = initial_parameters();
  const auto batches = global_batches();
  const auto single = train_one_process(init, batches);
  const auto g0 = half_batch_gradients(init, 0);
  const auto g1 = half_batch_gradients(init, 1);
  for (const bool views : {true, false}) {
    SCOPED_TRACE(views ? "gradients as bucket views" : "copied back");
    const TwoRanks two = train_two_ranks(init, batches, views, at::kBFloat16);
    ASSERT_EQ(two.failures[0], "");
    ASSERT_EQ(two.failures[1], "");
    EXPECT_EQ(two.communicated[0], (std::vector<at::ScalarType>{at::kBFloat16, at::kBFloat16}));
    for (size_t i = 0; i < init.size(); ++i) {
      // The first step's average is the hook's arithmetic done here on the CPU: each rank's
      // gradient cast to bf16 and halved, the two summed in bf16, cast back; not the exact mean.
      const at::Tensor hook =
          (g0[i].to(at::kBFloat16).div(2) + g1[i].to(at::kBFloat16).div(2)).to(at::kDouble);
      for (int r = 0; r < 2; ++r) {
        EXPECT_TRUE(two.first_grads[r][i].equal(hook)) << "rank " << r << " parameter " << i;
      }
      EXPECT_GT(max_difference(hook, (g0[i] + g1[i]) / 2), 0.0) << i;
      // The ranks apply the same averages: the same parameters, bit for bit.
      EXPECT_TRUE(two.params[0][i].equal(two.params[1][i])) << i;
      // Near the exact training but not on it. Each averaged gradient element is off by at most
      // ~2^-8 relative (two bf16 roundings of 2^-9: the cast and the sum); AdamW's step
      // lr * m/(sqrt(v) + eps), |m/sqrt(v)| <= 1 here, moves by about twice that relative (m
      // linear in the gradients, sqrt(v) half), so after kSteps steps a parameter is within
      // kSteps * lr * 2^-7 of the exact run; 2^-6 leaves a factor 2. The parameters moved over
      // 1e-3 (the test above), 7x this bound.
      const double tolerance = kSteps * adamw().lr * std::ldexp(1.0, -6);
      const double off = max_difference(two.params[0][i], single[i]);
      EXPECT_GT(off, 1e-12) << i;
      EXPECT_LT(off, tolerance) << i;
    }
  }
}

// One step's gradients through the buckets: forward and backward on the first rank's share.
void backward_through(GradientBuckets& buckets, const std::vector<at::Tensor>& params) {
  const auto [x, y] = global_batches().front();
  buckets.begin_backward();
  loss_of(params, x.narrow(0, 0, kRankBatch), y.narrow(0, 0, kRankBatch)).backward();
  buckets.end_backward();
}

std::vector<at::Tensor> reference_gradients(const std::vector<at::Tensor>& init) {
  const auto params = trainable_copy(init);
  const auto [x, y] = global_batches().front();
  loss_of(params, x.narrow(0, 0, kRankBatch), y.narrow(0, 0, kRankBatch)).backward();
  std::vector<at::Tensor> grads;
  for (const auto& p : params) grads.push_back(p.grad().clone());
  return grads;
}

// One rank (a Gloo group of size 1 still all-reduces: the average of one is the gradient), the
// model's parameters, and the gradients a backward without buckets gives them.
class OneRankBuckets : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gloo()) GTEST_SKIP() << "built without Gloo's headers";
    // Another port when the free one found was taken before the store could listen on it.
    for (int attempt = 0; !group && attempt < 3; ++attempt) {
      env.master_port = free_port();
      try {
        group.emplace(env, at::Device(at::kCPU), std::chrono::seconds(30));
      } catch (const std::exception& e) {
        if (attempt == 2 || std::string(e.what()).find("EADDRINUSE") == std::string::npos) throw;
      }
    }
  }

  LaunchEnv env;
  std::optional<ProcessGroup> group;
  const std::vector<at::Tensor> init = initial_parameters();
  const std::vector<at::Tensor> expected = reference_gradients(init);
  std::vector<at::Tensor> params = trainable_copy(init);
};

bool in_some_bucket(const GradientBuckets& buckets, const at::Tensor& grad) {
  for (size_t b = 0; b < buckets.bucket_count(); ++b) {
    if (grad.is_alias_of(buckets.bucket_buffer(b))) return true;
  }
  return false;
}

// Where the gradient starts in its bucket, in bytes.
int64_t offset_in_bucket(const GradientBuckets& buckets, const at::Tensor& grad) {
  for (size_t b = 0; b < buckets.bucket_count(); ++b) {
    const at::Tensor& buffer = buckets.bucket_buffer(b);
    if (grad.is_alias_of(buffer)) {
      return static_cast<const char*>(grad.data_ptr()) -
             static_cast<const char*>(buffer.data_ptr());
    }
  }
  return -1;
}

TEST_F(OneRankBuckets, BucketsHoldParametersInReverseOrderUpToTheCap) {
  // b2 (24 B) + W2 (192 B) reach 100 B: one bucket; b1 (64 B) + W1 (320 B) the next.
  GradientBuckets buckets(params, *group, 100);
  ASSERT_EQ(buckets.bucket_count(), 2u);
  EXPECT_EQ(buckets.bucket_members(0), (std::vector<size_t>{3, 2}));
  EXPECT_EQ(buckets.bucket_members(1), (std::vector<size_t>{1, 0}));
  GradientBuckets one(params, *group, 1 << 20);
  EXPECT_EQ(one.bucket_count(), 1u);
}

TEST_F(OneRankBuckets, GradientsAreViewsOfTheirBucketsWithNothingCopiedBack) {
  GradientBuckets buckets(params, *group, 100);
  FusedAdamW opt(params, adamw());
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad();  // set to none, as the training step does
    backward_through(buckets, params);
    EXPECT_EQ(buckets.last_copied_back(), 0u) << "step " << step;
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(in_some_bucket(buckets, params[i].grad())) << "step " << step << " param " << i;
      EXPECT_EQ(params[i].grad().strides(), params[i].strides());
      // Aligned for the optimizer's vectorized loads (b2 has 3 elements: W2 would follow at 24 B).
      EXPECT_EQ(offset_in_bucket(buckets, params[i].grad()) % 256, 0) << i;
      if (step == 0) {
        EXPECT_TRUE(params[i].grad().equal(expected[i])) << i;
      }
    }
    opt.step();
  }
}

// What on_bucket_done runs for the buckets before the last is work done while the last
// all-reduces go on, not communication left exposed: its time is taken out of the exposed span.
TEST_F(OneRankBuckets, TheBucketCallbacksTimeIsNotCountedAsExposedCommunication) {
  GradientBuckets buckets(params, *group, 100);
  ASSERT_EQ(buckets.bucket_count(), 2u);
  buckets.start_recording();
  std::vector<size_t> done;
  buckets.begin_backward();
  const auto [x, y] = global_batches().front();
  loss_of(params, x.narrow(0, 0, kRankBatch), y.narrow(0, 0, kRankBatch)).backward();
  const auto started = std::chrono::steady_clock::now();
  buckets.end_backward([&](size_t b) {
    done.push_back(b);
    if (b == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  const double whole =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(done, (std::vector<size_t>{0, 1}));
  const CommStats stats = buckets.recorded();
  EXPECT_EQ(stats.steps, 1);
  ASSERT_GE(whole, 0.2);
  EXPECT_LT(stats.exposed_seconds, 0.1) << "the 200 ms callback counted as communication";
  EXPECT_GE(stats.exposed_seconds, 0.0);
}

TEST_F(OneRankBuckets, ViewsOffCopiesTheAveragesBack) {
  GradientBuckets buckets(params, *group, 100, /*gradients_as_views=*/false);
  backward_through(buckets, params);
  EXPECT_EQ(buckets.last_copied_back(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_FALSE(in_some_bucket(buckets, params[i].grad())) << i;
    EXPECT_TRUE(params[i].grad().equal(expected[i])) << i;
  }
}

TEST_F(OneRankBuckets, AGradientOfItsOwnGetsTheAveragesCopied) {
  // A .grad defined before the backward cannot become a view (autograd adds into it): the
  // fallback copies, and the gradient holds this backward's average only, as before views.
  GradientBuckets buckets(params, *group, 100);
  const at::Tensor own = at::full_like(params[0], 5.0);
  params[0].mutable_grad() = own;
  backward_through(buckets, params);
  EXPECT_EQ(buckets.last_copied_back(), 1u);
  EXPECT_TRUE(params[0].grad().is_same(own));
  EXPECT_TRUE(params[0].grad().equal(expected[0]));
  EXPECT_TRUE(in_some_bucket(buckets, params[1].grad()));
}

TEST_F(OneRankBuckets, ViewsKeptWithoutZeroingAreNotAddedTwice) {
  // Two steps without zero_grad: the second backward's gradient must not be added into the
  // bucket memory its hook copied it to (which would double it).
  GradientBuckets buckets(params, *group, 100);
  backward_through(buckets, params);
  backward_through(buckets, params);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(params[i].grad().equal(expected[i])) << i;
    EXPECT_TRUE(in_some_bucket(buckets, params[i].grad())) << i;
  }
}

TEST_F(OneRankBuckets, AParameterWithoutAGradientGetsItsBucketView) {
  params.push_back(at::ones({2}, at::kDouble).requires_grad_(true));  // not in the loss
  GradientBuckets buckets(params, *group, 100);
  backward_through(buckets, params);
  ASSERT_TRUE(params.back().grad().defined());
  EXPECT_TRUE(in_some_bucket(buckets, params.back().grad()));
  EXPECT_EQ(params.back().grad().abs().sum().item<double>(), 0.0);
}

TEST_F(OneRankBuckets, Bf16CommunicationRoundsEveryGradientToBf16) {
  // One rank: the average is the gradient itself, but through bf16 (cast, divided by 1, summed,
  // cast back), step after step.
  GradientBuckets buckets(params, *group, 100, /*gradients_as_views=*/true, at::kBFloat16);
  ASSERT_EQ(buckets.bucket_count(), 2u);
  for (size_t b = 0; b < buckets.bucket_count(); ++b) {
    EXPECT_EQ(buckets.bucket_buffer(b).scalar_type(), at::kDouble);
    EXPECT_EQ(buckets.communication_buffer(b).scalar_type(), at::kBFloat16);
    EXPECT_EQ(buckets.communication_buffer(b).numel(), buckets.bucket_buffer(b).numel());
  }
  FusedAdamW opt(params, adamw());
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad();
    backward_through(buckets, params);
    EXPECT_EQ(buckets.last_copied_back(), 0u);
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(in_some_bucket(buckets, params[i].grad())) << "step " << step << " param " << i;
      if (step == 0) {
        const at::Tensor rounded = expected[i].to(at::kBFloat16).to(at::kDouble);
        EXPECT_TRUE(params[i].grad().equal(rounded)) << i;
        EXPECT_FALSE(params[i].grad().equal(expected[i])) << i;
      }
    }
    opt.step();
  }
}

TEST_F(OneRankBuckets, ABucketAlreadyInTheCommunicationDtypeIsReducedInPlace) {
  std::vector<at::Tensor> bf16;
  for (const auto& p : init) bf16.push_back(p.to(at::kBFloat16).requires_grad_(true));
  GradientBuckets buckets(bf16, *group, 100, true, at::kBFloat16);
  GradientBuckets fp64(params, *group, 100);
  // Without a communication dtype, and with the bf16 one for bf16 gradients: no second buffer.
  for (const GradientBuckets* in_place : {&buckets, &fp64}) {
    for (size_t b = 0; b < in_place->bucket_count(); ++b) {
      EXPECT_TRUE(in_place->communication_buffer(b).is_same(in_place->bucket_buffer(b))) << b;
    }
  }
}

TEST_F(OneRankBuckets, ASharedOptimizerNeedsTheCopyEngines) {
  // On the CPU (Gloo) there are none: the parameters stay where they are.
  const void* before = params[0].data_ptr();
  EXPECT_THROW(GradientBuckets(params, *group, 100, true, std::nullopt, /*copy_engine=*/false,
                               /*sharded=*/true),
               c10::Error);
  EXPECT_EQ(params[0].data_ptr(), before);
  GradientBuckets plain(params, *group, 100);
  EXPECT_FALSE(plain.sharded());
  EXPECT_TRUE(plain.shards().empty());
}

TEST(OptimizerShard, NeedsTheCopyEnginesTheFusedAdamWABucketStepAndNoLossScaling) {
  RunConfig config;
  config.mode = PrecisionMode::amp_bf16;
  EXPECT_EQ(optimizer_shard_obstacle(config, true), "");
  EXPECT_EQ(optimizer_shard_obstacle(config, false),
            "the gradients are not all-reduced by the copy engines");
  RunConfig libtorch = config;
  libtorch.fused_adamw = false;
  EXPECT_EQ(optimizer_shard_obstacle(libtorch, true),
            "LibTorch's AdamW (--fused-adamw off) keeps the whole state");
  RunConfig after_last = config;
  after_last.bucket_step = false;
  EXPECT_EQ(optimizer_shard_obstacle(after_last, true),
            "--bucket-step off steps every parameter after the last bucket");
  RunConfig fp16 = config;
  fp16.mode = PrecisionMode::amp_fp16;
  EXPECT_EQ(optimizer_shard_obstacle(fp16, true),
            "fp16's loss scaling skips a step on an overflow in any gradient");
}

TEST(GradientBuckets, RanksWithoutAveragingWouldDiffer) {
  // The comparison above can fail: each half's own gradient gives other parameters.
  const auto init = initial_parameters();
  const auto batches = global_batches();
  const auto single = trainable_copy(init);
  const auto half = trainable_copy(init);
  FusedAdamW a(single, adamw()), b(half, adamw());
  for (const auto& [x, y] : batches) {
    a.zero_grad();
    b.zero_grad();
    loss_of(single, x, y).backward();
    loss_of(half, x.narrow(0, 0, kRankBatch), y.narrow(0, 0, kRankBatch)).backward();
    a.step();
    b.step();
  }
  EXPECT_GT((single[0] - half[0]).abs().max().item<double>(), 1e-6);
}

}  // namespace
}  // namespace gpuscope::workloads
