// The sweep's plan, refinement and answers, on made-up curves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

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

// The clocks an RTX 3090 (2100 MHz) or an H100 SXM (1980 MHz) lists: down to 210 MHz in 15 MHz.
std::vector<unsigned> lockable(unsigned highest) {
  std::vector<unsigned> clocks;
  for (unsigned mhz = highest; mhz >= 210; mhz -= 15) clocks.push_back(mhz);
  return clocks;
}

TEST(PlanClocks, GoesFromTheHighestClockToFortyPercentOfItInFivePercentSteps) {
  auto plan = plan_clocks(lockable(2100), std::nullopt);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_THAT(*plan, ElementsAre(2100, 1995, 1890, 1785, 1680, 1575, 1470, 1365, 1260, 1155, 1050,
                                 945, 840));
  // 5 % of 1980 MHz is 99 MHz: each step snaps to a clock the GPU lists.
  auto h100 = plan_clocks(lockable(1980), std::nullopt);
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(h100->front(), 1980);
  EXPECT_EQ((*h100)[1], 1875);   // 1881 -> the nearest listed clock
  EXPECT_EQ(h100->back(), 795);  // 40 % is 792 MHz
  for (double mhz : *h100) EXPECT_EQ(static_cast<unsigned>(mhz) % 15, 0u) << mhz;
}

TEST(PlanClocks, ARangeIsClampedToTheListAndSnapped) {
  auto plan = plan_clocks(lockable(1980), LimitRange{2500, 1000, 250});
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(*plan, ElementsAre(1980, 1725, 1485, 1230, 1005));
  EXPECT_EQ(plan_clocks(lockable(1980), LimitRange{1500, 1000, 0}).code(), Code::invalid_argument);
  EXPECT_EQ(plan_clocks(lockable(1980), LimitRange{100, 50, 10}).code(), Code::invalid_argument);
  EXPECT_EQ(plan_clocks({}, std::nullopt).code(), Code::not_supported);
}

TEST(RefineLimits, SnapsTheMidpointsToClocksTheGpuCanLock) {
  std::vector<Point> points;
  for (auto [mhz, speed] : std::vector<std::pair<double, double>>{
           {2100, 100}, {1995, 100}, {1890, 97}, {1785, 92}, {1680, 86}, {1575, 80}}) {
    Point p;
    p.value = mhz;
    p.samples_per_second = speed;
    points.push_back(p);
  }
  const auto extra = refine_limits(points, {0.9}, 30, [](double mhz) {
    return std::round(mhz / 15) * 15;  // 1732.5 -> 1740 (to the even multiple above)
  });
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(static_cast<unsigned>(extra.front()) % 15, 0u);
  EXPECT_GT(extra.front(), 1680);
  EXPECT_LT(extra.front(), 1785);
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
  p.value = limit_w;
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
  skipped.value = 225;
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
  EXPECT_NEAR(r.knees[0].value, 280, 1e-9);
  EXPECT_NEAR(r.knees[1].value, 330, 1e-9);
  EXPECT_NEAR(r.knees[2].value, 380, 1e-9);
  EXPECT_EQ(r.min_energy_value, 200);
  ASSERT_TRUE(r.recommendation.has_value());
  EXPECT_EQ(r.recommendation->value, 330);
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
  skipped.value = 300;
  skipped.skipped = "refused";
  r.points.push_back(skipped);
  compute_answers(r, std::nullopt);
  EXPECT_TRUE(r.knees.empty());
  EXPECT_FALSE(r.recommendation.has_value());
}

}  // namespace
}  // namespace gpuscope::sweep
