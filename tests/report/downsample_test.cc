// Downsampling is for drawing: bounded points, with every extreme, the ends and the shape kept.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "report/downsample.h"

namespace gpuscope::report::detail {
namespace {

TEST(DownsampleTest, HundredThousandPointsBecomeABoundedNumberWithMinAndMaxKept) {
  constexpr std::size_t n = 100000;
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = 0.01 * static_cast<double>(i);
    y[i] = 300 + 50 * std::sin(static_cast<double>(i) / 900.0);
  }
  y[12345] = 9000;  // a one-sample spike
  y[77777] = -40;   // a one-sample dip
  for (std::size_t max_points : {8u, 100u, 1500u, 4000u}) {
    std::vector<std::size_t> kept = downsample_indices(x, y, max_points);
    EXPECT_LE(kept.size(), max_points);
    EXPECT_GE(kept.size(), max_points / 2) << "the budget should be used";
    EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
    EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end()) << "no duplicates";
    EXPECT_EQ(kept.front(), 0u);
    EXPECT_EQ(kept.back(), n - 1);
    EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), 12345u)) << max_points;
    EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), 77777u)) << max_points;
  }
}

TEST(DownsampleTest, EveryIntervalKeepsItsOwnExtremes) {
  // A square wave: each interval's high and low must survive, or the drawn wave flattens.
  constexpr std::size_t n = 20000;
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<double>(i);
    y[i] = (i / 250) % 2 ? 1.0 : 0.0;
  }
  std::vector<std::size_t> kept = downsample_indices(x, y, 400);  // 100 intervals of 200 points
  double lo = 1, hi = 0;
  int highs = 0;
  for (std::size_t i : kept) {
    lo = std::min(lo, y[i]);
    hi = std::max(hi, y[i]);
    highs += y[i] == 1.0;
  }
  EXPECT_EQ(lo, 0.0);
  EXPECT_EQ(hi, 1.0);
  EXPECT_GT(highs, 60);
}

TEST(DownsampleTest, ShortSeriesAreKeptWhole) {
  std::vector<double> x = {0, 1, 2}, y = {5, 6, 7};
  EXPECT_THAT(downsample_indices(x, y, 1500), ::testing::ElementsAre(0u, 1u, 2u));
}

TEST(DownsampleTest, IrregularTimesAndGapsAreHandled) {
  std::vector<double> x, y;
  for (int i = 0; i < 5000; ++i) {
    x.push_back(i < 2500 ? i * 0.1 : 1000 + i * 0.1);  // a long pause in sampling
    y.push_back(i == 4000 ? std::nan("") : static_cast<double>(i % 17));
  }
  std::vector<std::size_t> kept = downsample_indices(x, y, 200);
  EXPECT_LE(kept.size(), 200u);
  EXPECT_EQ(kept.back(), 4999u);
  for (std::size_t i : kept) EXPECT_LT(i, x.size());
}

TEST(DownsampleTest, ConstantTimeDoesNotDivideByZero) {
  std::vector<double> x(1000, 5.0), y(1000);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<double>(i);
  std::vector<std::size_t> kept = downsample_indices(x, y, 100);
  EXPECT_LE(kept.size(), 100u);
  EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), 999u));
}

}  // namespace
}  // namespace gpuscope::report::detail
