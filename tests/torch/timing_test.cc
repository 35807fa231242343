#include "timing.h"

#include <gtest/gtest.h>

namespace gpuscope::workloads {
namespace {

TEST(Summary, OrderStatistics) {
  const Summary s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.p10, 1.4);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_DOUBLE_EQ(s.relative_spread, (4.6 - 1.4) / 3);
}

TEST(Summary, EmptyAndSingle) {
  EXPECT_EQ(summarize({}).count, 0u);
  const Summary one = summarize({2.5});
  EXPECT_DOUBLE_EQ(one.median, 2.5);
  EXPECT_DOUBLE_EQ(one.relative_spread, 0);
}

TEST(StepClock, HostClockGivesOneIntervalPerStep) {
  StepClock clock(DeviceInfo{});
  clock.mark();
  clock.mark();
  clock.mark();
  const auto intervals = clock.intervals_s();
  ASSERT_EQ(intervals.size(), 2u);
  for (const double t : intervals) EXPECT_GE(t, 0);
  EXPECT_TRUE(clock.intervals_s().empty());  // marks are forgotten
}

}  // namespace
}  // namespace gpuscope::workloads
