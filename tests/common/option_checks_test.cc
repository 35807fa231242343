// The one rule for durations, intervals and GPU selectors that every command applies.
#include "gpuscope/option_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpuscope {
namespace {

using ::testing::HasSubstr;

TEST(CheckDuration, AcceptsFinitePositiveDurationsUpToTheMaximum) {
  EXPECT_TRUE(check_duration("--duration", 0.5).ok());
  EXPECT_TRUE(check_duration("--duration", 60).ok());
  EXPECT_TRUE(check_duration("--duration", kMaxDurationSeconds).ok());
}

TEST(CheckDuration, RefusesWhatWouldRunForeverOrNotAtAll) {
  // monitor --duration -1, 0 and nan ran until interrupted; inf too.
  for (double bad : {-1.0, 0.0, std::nan(""), std::numeric_limits<double>::infinity(),
                     kMaxDurationSeconds + 1, -std::numeric_limits<double>::infinity()}) {
    Status s = check_duration("--duration", bad);
    EXPECT_EQ(s.code(), Code::invalid_argument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("--duration: must be more than 0 and at most 30 days"));
  }
  EXPECT_THAT(check_duration("--duration", std::nan("")).message(), HasSubstr("(got nan)"));
  EXPECT_THAT(check_duration("--duration", -1).message(), HasSubstr("(got -1 s)"));
}

TEST(CheckDuration, ACommandsOwnRangeIsSaidInTheOptionsUnits) {
  const DurationRange interval{.min_seconds = 0.02, .max_seconds = 3600};
  EXPECT_TRUE(check_duration("--interval", 0.02, interval).ok());
  EXPECT_TRUE(check_duration("--interval", 3600, interval).ok());
  EXPECT_EQ(check_duration("--interval", 0.005, interval).message(),
            "--interval: must be at least 20 ms and at most 1 h (got 5 ms)");
  EXPECT_FALSE(check_duration("--interval", 3601, interval).ok());
}

TEST(ReadableDuration, PicksTheLargestWholeUnitAndNeverALongNumber) {
  EXPECT_EQ(readable_duration(0.02), "20 ms");
  EXPECT_EQ(readable_duration(1.5), "1.5 s");
  EXPECT_EQ(readable_duration(90), "90 s");
  EXPECT_EQ(readable_duration(900), "15 min");
  EXPECT_EQ(readable_duration(7200), "2 h");
  EXPECT_EQ(readable_duration(86400), "1 day");
  EXPECT_EQ(readable_duration(kMaxDurationSeconds), "30 days");
  EXPECT_EQ(readable_duration(0), "0 s");
  // burn --duration 0 printed the largest double, 309 digits long, as the limit.
  EXPECT_LE(readable_duration(std::numeric_limits<double>::max()).size(), 20u);
}

TEST(CheckGpuSelector, AnEmptySelectorIsAnErrorNotEveryGpu) {
  EXPECT_TRUE(check_gpu_selector("0").ok());
  EXPECT_TRUE(check_gpu_selector("GPU-1234").ok());
  Status empty = check_gpu_selector("");
  EXPECT_EQ(empty.code(), Code::invalid_argument);
  EXPECT_THAT(empty.message(), HasSubstr("omit --gpu to use every GPU"));
}

}  // namespace
}  // namespace gpuscope
