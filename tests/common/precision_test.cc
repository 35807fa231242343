#include "gpuscope/precision.h"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

TEST(Precision, NamesRoundTrip) {
  for (Precision p : kAllPrecisions) {
    auto parsed = parse_precision(precision_name(p));
    ASSERT_TRUE(parsed.has_value()) << precision_name(p);
    EXPECT_EQ(*parsed, p);
  }
  EXPECT_FALSE(parse_precision("fp4").has_value());
  EXPECT_FALSE(parse_precision("").has_value());
}

}  // namespace
}  // namespace gpuscope
