#include "trace/intervals.h"

#include <gtest/gtest.h>

namespace gpuscope::trace::detail {
namespace {

TEST(Intervals, MergeSortsJoinsOverlapsAndTouchingOnesAndDropsEmptyOnes) {
  const auto merged = merge({{50, 60}, {0, 10}, {5, 20}, {20, 30}, {40, 40}, {45, 44}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].start, 0);
  EXPECT_EQ(merged[0].end, 30);
  EXPECT_EQ(merged[1].start, 50);
  EXPECT_EQ(merged[1].end, 60);
  EXPECT_EQ(total(merged), 40);
}

TEST(Intervals, CoveredCountsOnlyWhatLiesInsideTheSpan) {
  const auto merged = merge({{0, 30}, {50, 60}});
  EXPECT_EQ(covered(merged, 0, 100), 40);
  EXPECT_EQ(covered(merged, 10, 55), 25);
  EXPECT_EQ(covered(merged, 30, 50), 0);  // the gap
  EXPECT_EQ(covered(merged, 60, 70), 0);  // after the last
  EXPECT_EQ(covered({}, 0, 10), 0);
}

TEST(Intervals, NextCoveredIsTheFirstBusyInstantAtOrAfter) {
  const auto merged = merge({{0, 30}, {50, 60}});
  EXPECT_EQ(next_covered(merged, 10), 10);  // inside one
  EXPECT_EQ(next_covered(merged, 30), 50);  // an interval's end is not inside it
  EXPECT_EQ(next_covered(merged, 40), 50);
  EXPECT_FALSE(next_covered(merged, 60).has_value());
}

}  // namespace
}  // namespace gpuscope::trace::detail
