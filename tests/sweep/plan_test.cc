// The sweep's plan, refinement and answers, on made-up curves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/sweep.h"

namespace gpuscope::sweep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PlanLimits, GoesFromTheMaximumToTheMinimumInFivePercentSteps) {
  auto plan = plan_limits(100, 480, std::nullopt);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->front(), 480);
  EXPECT_EQ((*plan)[1], 456);  // 5 % of 480 W
  EXPECT_EQ(plan->back(), 100);
  EXPECT_EQ(plan->size(), 17u);  // 480 ... 120, then the minimum
  for (double w : *plan) EXPECT_GE(w, 100);
}

TEST(PlanLimits, ClampsARangeToTheGpusConstraintsNeverBelowTheMinimum) {
  // zeus#143: 25 W steps from 260 W reach an invalid 85 W on a 100-260 W card.
  auto plan = plan_limits(100, 260, LimitRange{260, 0, 25});
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(*plan, ElementsAre(260, 235, 210, 185, 160, 135, 110, 100));
  auto clamped = plan_limits(100, 480, LimitRange{600, 300, 100});
  ASSERT_TRUE(clamped.ok());
  EXPECT_THAT(*clamped, ElementsAre(480, 380, 300));
  EXPECT_EQ(plan_limits(100, 480, LimitRange{480, 200, 0}).code(), Code::invalid_argument);
  EXPECT_EQ(plan_limits(100, 480, LimitRange{50, 20, 10}).code(), Code::invalid_argument);
}

Point measured(double limit_w, double speed, double joules_per_sample, double temperature_c) {
  Point p;
  p.limit_w = limit_w;
  p.samples_per_second = speed;
  p.joules_per_sample = joules_per_sample;
  p.temperature_max_c = temperature_c;
  p.stable = true;
  return p;
}

TEST(RefineLimits, AddsTheMidpointOfTheLimitsAroundEachKnee) {
  std::vector<Point> points = {measured(400, 100, 4, 70), measured(300, 95, 3, 60),
                               measured(200, 70, 2.9, 50), measured(100, 30, 3.3, 40)};
  // 95 % lies at 300 W exactly (bracketed by 200-300), 90 % and 80 % between 200 and 300.
  EXPECT_THAT(refine_limits(points, {0.8, 0.9, 0.95}), ElementsAre(250));
  points.push_back(measured(250, 90, 2.8, 55));
  EXPECT_THAT(refine_limits(points, {0.8, 0.9}), ElementsAre(225));
  Point skipped;
  skipped.limit_w = 225;
  skipped.skipped = "refused";
  points.push_back(skipped);
  EXPECT_TRUE(refine_limits(points, {0.8}).empty());  // tried already
}

TEST(ComputeAnswers, KneesMinimumEnergyAndTheRecommendationInTheSeedsTerms) {
  WorkloadResult r;
  // speed fraction f(P); J/sample = P / (310 f); temperature 30 + 0.08 P
  const std::vector<std::pair<double, double>> curve = {
      {480, 1.0}, {390, 0.959}, {380, 0.95}, {330, 0.9}, {280, 0.8}, {200, 0.6}, {100, 0.22}};
  for (const auto& [w, f] : curve) {
    r.points.push_back(measured(w, 310 * f, w / (310 * f), 30 + 0.08 * w));
  }
  compute_answers(r, 390);
  ASSERT_EQ(r.knees.size(), 3u);
  EXPECT_NEAR(r.knees[0].limit_w, 280, 1e-9);
  EXPECT_NEAR(r.knees[1].limit_w, 330, 1e-9);
  EXPECT_NEAR(r.knees[2].limit_w, 380, 1e-9);
  EXPECT_EQ(r.min_energy_limit_w, 200);
  ASSERT_TRUE(r.recommendation.has_value());
  EXPECT_EQ(r.recommendation->limit_w, 330);
  EXPECT_NEAR(r.recommendation->vs_max.speed, -0.10, 1e-9);
  EXPECT_NEAR(r.recommendation->vs_max.energy, 330 / 0.9 / 480 - 1, 1e-9);  // -24 %
  ASSERT_TRUE(r.recommendation->vs_prior.has_value());
  EXPECT_NEAR(*r.recommendation->vs_prior->temperature_c, -4.8, 1e-9);
  EXPECT_THAT(r.recommendation->text, HasSubstr("330 W: \u221210 % speed, \u221224 % energy"));
  EXPECT_THAT(r.recommendation->text, HasSubstr("\u22125 \u00b0C vs 390 W"));
}

TEST(ComputeAnswers, NothingMeasuredGivesNoAnswers) {
  WorkloadResult r;
  Point skipped;
  skipped.limit_w = 300;
  skipped.skipped = "refused";
  r.points.push_back(skipped);
  compute_answers(r, std::nullopt);
  EXPECT_TRUE(r.knees.empty());
  EXPECT_FALSE(r.recommendation.has_value());
}

}  // namespace
}  // namespace gpuscope::sweep
