// Knees of power-limit curves: the lowest limit that keeps 80/90/95 % of the best throughput.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "gpuscope/analysis.h"
#include "gpuscope/store.h"

namespace gpuscope::analysis {
namespace {

TEST(KneeTest, InterpolatesBetweenTheLimitsAroundTheCrossing) {
  std::vector<SweepPoint> points = {{200, 50}, {300, 80}, {400, 95}, {500, 100}};
  auto k90 = find_knee(points, 0.9);
  ASSERT_TRUE(k90.has_value());
  EXPECT_NEAR(k90->power_limit_w, 300 + 100 * (90.0 - 80.0) / (95.0 - 80.0), 1e-9);
  EXPECT_FALSE(k90->at_lowest_limit);
  EXPECT_DOUBLE_EQ(find_knee(points, 0.8)->power_limit_w, 300);
  EXPECT_DOUBLE_EQ(find_knee(points, 1.0)->power_limit_w, 500);
}

TEST(KneeTest, OrderOfPointsDoesNotMatter) {
  std::vector<SweepPoint> points = {{500, 100}, {200, 50}, {400, 95}, {300, 80}};
  EXPECT_NEAR(find_knee(points, 0.9)->power_limit_w, 366.6666667, 1e-6);
}

TEST(KneeTest, ReachedAtTheLowestLimitIsMarked) {
  std::vector<SweepPoint> points = {{150, 96}, {250, 99}, {350, 100}};
  auto knee = find_knee(points, 0.9);
  ASSERT_TRUE(knee.has_value());
  EXPECT_DOUBLE_EQ(knee->power_limit_w, 150);
  EXPECT_TRUE(knee->at_lowest_limit);
}

TEST(KneeTest, NoisyCurveUsesTheFirstCrossing) {
  // The best point is not the last: the knee is relative to the best, found from below.
  std::vector<SweepPoint> points = {{200, 70}, {250, 91}, {300, 89}, {350, 100}, {400, 99}};
  EXPECT_NEAR(find_knee(points, 0.9)->power_limit_w, 200 + 50 * 20.0 / 21.0, 1e-9);
}

TEST(KneeTest, NothingToFindInAnEmptyOrZeroCurve) {
  EXPECT_FALSE(find_knee({}, 0.9).has_value());
  EXPECT_FALSE(find_knee({{100, 0}, {200, 0}}, 0.9).has_value());
}

// The hand-made sweep fixture is shaped so that its knees are the ones seeds/000 read off its
// RTX 3090 charts; reading them back checks the fixture and the function together.
TEST(KneeTest, SeedZeroKneesComeBackFromTheSweepFixture) {
  auto runs = store::read_result_file(std::string(GPUSCOPE_TEST_FIXTURES) +
                                      "/report/sweep_rtx3090_handmade.records.json");
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  std::map<std::string, std::vector<SweepPoint>> curves;
  for (const store::Measurement& m : (*runs)[0].measurements) {
    if (m.name != store::names::kSamplesPerS) continue;
    curves[m.tags["mode"]].push_back({m.tags["power_limit_w"].get<double>(), *m.value});
  }
  const std::map<std::string, std::array<double, 3>> seed000 = {
      {"fp32", {280, 330, 380}},
      {"tf32", {230, 280, 320}},
      {"amp_fp16", {250, 300, 350}},
      {"fp16", {200, 230, 270}},
  };
  ASSERT_EQ(curves.size(), seed000.size());
  for (const auto& [mode, knees] : seed000) {
    const double fractions[] = {0.8, 0.9, 0.95};
    for (int i = 0; i < 3; ++i) {
      auto knee = find_knee(curves[mode], fractions[i]);
      ASSERT_TRUE(knee.has_value()) << mode;
      EXPECT_NEAR(knee->power_limit_w, knees[i], 0.5) << mode << " " << fractions[i];
    }
  }
}

}  // namespace
}  // namespace gpuscope::analysis
