// The convergence guard's verdicts on loss curves: a healthy one shaped like a real training
// run, one that diverges, one that ends well above fp32's, NaN, flat, and a collapsed loss scale.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

using ::testing::HasSubstr;

// Shaped like a small classifier's loss under AdamW: fast fall, then a slow tail, with
// step-to-step noise of a few percent.
LossCurve healthy(double phase = 0, int steps = 60) {
  LossCurve c;
  for (int i = 0; i < steps; ++i) {
    c.losses.push_back(2.3 * std::exp(-0.05 * i) + 0.2 + 0.03 * std::sin(1.7 * i + phase));
  }
  return c;
}

TEST(Guard, HealthyCurvesAreOk) {
  const LossCurve fp32 = healthy();
  EXPECT_EQ(judge_guard("fp32", fp32, std::nullopt).verdict, Verdict::ok);
  GuardResult bf16 = judge_guard("bf16", healthy(1.0), fp32);
  EXPECT_EQ(bf16.verdict, Verdict::ok) << bf16.reason;
  LossCurve amp = healthy(2.0);
  amp.loss_scale = 65536;
  amp.skipped_steps = 3;
  EXPECT_EQ(judge_guard("amp_fp16", amp, fp32).verdict, Verdict::ok);
}

TEST(Guard, ARisingCurveDiverged) {
  LossCurve c = healthy();
  for (int i = 20; i < 60; ++i) c.losses[i] = c.losses[19] + 0.1 * (i - 19);
  GuardResult g = judge_guard("fp16", c, healthy());
  EXPECT_EQ(g.verdict, Verdict::diverged);
  EXPECT_THAT(g.reason, HasSubstr("rose"));
}

TEST(Guard, EndingWellAboveFp32Diverged) {
  // Still falling, but it stalls at 1.5 where fp32 reaches ~0.3: more than half of fp32's drop.
  LossCurve c;
  for (int i = 0; i < 60; ++i) c.losses.push_back(1.3 * std::exp(-0.08 * i) + 1.3);
  c.losses[0] = 2.5;
  GuardResult g = judge_guard("fp8", c, healthy());
  EXPECT_EQ(g.verdict, Verdict::diverged) << g.reason;
  EXPECT_THAT(g.reason, HasSubstr("fp32"));
  // Without fp32 to compare with, the same curve learned.
  EXPECT_EQ(judge_guard("fp8", c, std::nullopt).verdict, Verdict::ok);
  // And close to fp32 it is fine: 0.05 of slack is below the threshold's both parts.
  LossCurve close = healthy();
  for (double& v : close.losses) v += 0.04;
  EXPECT_EQ(judge_guard("bf16", close, healthy()).verdict, Verdict::ok);
}

TEST(Guard, NonFiniteLossIsNan) {
  LossCurve c = healthy();
  c.losses[31] = std::numeric_limits<double>::quiet_NaN();
  GuardResult g = judge_guard("fp16", c, healthy());
  EXPECT_EQ(g.verdict, Verdict::nan);
  EXPECT_THAT(g.reason, HasSubstr("step 31"));
  c.losses[31] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(judge_guard("fp16", c, healthy()).verdict, Verdict::nan);
}

TEST(Guard, AFlatCurveIsNotLearning) {
  LossCurve c;
  for (int i = 0; i < 60; ++i) c.losses.push_back(2.30 - 0.001 * i + 0.02 * std::sin(i));
  GuardResult g = judge_guard("fp16", c, healthy());
  EXPECT_EQ(g.verdict, Verdict::not_learning) << g.reason;
  // fp32 itself is judged too: a reference that does not learn is reported.
  EXPECT_EQ(judge_guard("fp32", c, std::nullopt).verdict, Verdict::not_learning);
}

TEST(Guard, LossScaleCollapse) {
  LossCurve c = healthy();
  c.loss_scale = 1.0 / 65536;
  EXPECT_EQ(judge_guard("amp_fp16", c, healthy()).verdict, Verdict::scale_collapse);
  c.loss_scale = 1024;
  c.skipped_steps = 45;  // of 60
  GuardResult g = judge_guard("amp_fp16", c, healthy());
  EXPECT_EQ(g.verdict, Verdict::scale_collapse);
  EXPECT_THAT(g.reason, HasSubstr("45 of 60"));
}

TEST(Guard, TooShortIsUnknownAndNotBad) {
  LossCurve c;
  c.losses = {2.3};
  EXPECT_EQ(judge_guard("fp16", c, healthy()).verdict, Verdict::unknown);
  EXPECT_FALSE(verdict_is_bad(Verdict::unknown));
  EXPECT_FALSE(verdict_is_bad(Verdict::ok));
  EXPECT_TRUE(verdict_is_bad(Verdict::nan));
  EXPECT_EQ(verdict_name(Verdict::scale_collapse), "scale_collapse");
  EXPECT_EQ(verdict_name(Verdict::not_learning), "not_learning");
}

}  // namespace
}  // namespace gpuscope::bench
