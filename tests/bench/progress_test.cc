// The progress line: per-row estimates, corrected by how long finished rows really took.
#include "bench/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuscope::bench::detail {
namespace {

using ::testing::HasSubstr;

TEST(Progress, RemainingTimeLearnsFromFinishedRows) {
  Progress p({10, 20, 30});
  EXPECT_DOUBLE_EQ(p.remaining_s(0), 60);   // nothing ran yet: the estimates
  p.finished(0, 20);                        // took twice its estimate
  EXPECT_DOUBLE_EQ(p.remaining_s(1), 100);  // (20 + 30) x 2
  p.finished(1, 20);                        // 40 s for 30 s of estimates so far
  EXPECT_NEAR(p.remaining_s(2), 30 * 40.0 / 30, 1e-9);
  EXPECT_THAT(p.line(2, "vit_b16 train fp32", 40),
              HasSubstr("bench [3/3] vit_b16 train fp32 | 40s elapsed, ~40s left"));
}

TEST(Progress, PriorsGrowWithStepsAndBatchSearch) {
  RowSpec a;
  a.task = "train";
  a.warmup = 5;
  a.windows = 3;
  a.steps = 10;
  RowSpec b = a;
  b.steps = 20;
  RowSpec c = a;
  c.batch = "auto";
  EXPECT_LT(prior_seconds(a), prior_seconds(b));
  EXPECT_LT(prior_seconds(a), prior_seconds(c));
  EXPECT_EQ(format_duration(42), "42s");
  EXPECT_EQ(format_duration(250), "4m10s");
  EXPECT_EQ(format_duration(3720), "1h02m");
}

}  // namespace
}  // namespace gpuscope::bench::detail
