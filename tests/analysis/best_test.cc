// "Fastest" and "most efficient" that respect the noise: within the spread is a tie.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/analysis.h"

namespace gpuscope::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Two quick studies an hour apart named amp_bf16 and then bf16 the most efficient ResNet-50
// training mode, 1 % apart: within the rows' spread, that is a tie.
TEST(BestOfTest, WithinTheSpreadIsATie) {
  auto best = best_of({{"fp32", 2.0, 0.02}, {"amp_bf16", 0.500, 0.03}, {"bf16", 0.505, 0.02}},
                      /*higher_is_better=*/false);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->name, "amp_bf16");
  EXPECT_THAT(best->tied_with, ElementsAre("bf16"));
  ASSERT_TRUE(best->margin.has_value());
  EXPECT_NEAR(*best->margin, 0.01, 1e-9);
}

TEST(BestOfTest, BeyondTheSpreadIsAWinner) {
  auto best = best_of({{"fp32", 1000, 0.02}, {"amp_bf16", 2500, 0.02}, {"tf32", 1800, 0.01}},
                      /*higher_is_better=*/true);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->name, "amp_bf16");
  EXPECT_THAT(best->tied_with, IsEmpty());
  EXPECT_NEAR(*best->margin, 2500.0 / 1800 - 1, 1e-9);
}

// Without a measured spread nothing can be called a tie but an exact one.
TEST(BestOfTest, UnknownSpreadNamesTheBestAndNoEmptyList) {
  EXPECT_FALSE(best_of({}, true).has_value());
  auto alone = best_of({{"fp16", 5, std::nullopt}}, true);
  ASSERT_TRUE(alone.has_value());
  EXPECT_FALSE(alone->margin.has_value());
  auto two = best_of({{"a", 100, std::nullopt}, {"b", 99, std::nullopt}}, true);
  EXPECT_EQ(two->name, "a");
  EXPECT_THAT(two->tied_with, IsEmpty());
}

}  // namespace
}  // namespace gpuscope::analysis
