// The rules over a burn's GEMM spans: one rule and one threshold, each conclusion once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/analysis.h"

namespace gpuscope::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

GemmSpan capped(std::string precision, double span_s, double capped_s) {
  GemmSpan s;
  s.precision = std::move(precision);
  s.span_s = span_s;
  s.throttle_s = {{"sw_power_cap", capped_s}, {"hw_slowdown", 0}, {"gpu_idle", 1.0}};
  s.errors = 0;
  s.fraction_of_peak = 0.7;
  return s;
}

const Finding* find(const std::vector<Finding>& findings, std::string_view id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// The quick study on the H100 printed "ran at the power limit" once per precision: one finding.
TEST(BurnRulesTest, PowerLimitOverSeveralPrecisionsIsOneInfoFinding) {
  auto findings = burn_findings({capped("fp32", 6, 5.9), capped("bf16", 6, 5.9),
                                 capped("fp8", 6, 5.8), capped("int8", 6, 0.1)},
                                0, std::nullopt);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "power_capped");
  EXPECT_EQ(findings[0].severity, Severity::info);
  EXPECT_THAT(findings[0].subjects, ElementsAre("fp32", "bf16", "fp8"));
  EXPECT_THAT(findings[0].title, HasSubstr("ran at its power limit for 74% of the GEMM time"));
  EXPECT_EQ(findings[0].gpu, 0);
  ASSERT_FALSE(findings[0].evidence.empty());
  EXPECT_EQ(findings[0].evidence[0].unit, "%");
}

// The same threshold for every reason: a blip of thermal slowdown is noise, a long one a warning.
TEST(BurnRulesTest, ThrottlingBeyondThePowerLimitIsAWarningAboveOneShare) {
  GemmSpan blip = capped("fp16", 10, 0);
  blip.throttle_s["sw_thermal_slowdown"] = 0.2;  // 2 % of the span
  GemmSpan hot = capped("bf16", 10, 0);
  hot.throttle_s["sw_thermal_slowdown"] = 3;
  hot.temperature_max_c = 86;
  GemmSpan hot8 = hot;
  hot8.precision = "fp8";
  auto findings = burn_findings({blip, hot, hot8}, 1, 87.0);
  const Finding* throttled = find(findings, "throttled");
  ASSERT_NE(throttled, nullptr);
  EXPECT_EQ(throttled->severity, Severity::warning);
  EXPECT_THAT(throttled->subjects, ElementsAre("bf16", "fp8"));
  EXPECT_THAT(throttled->title, HasSubstr("sw_thermal_slowdown"));
  const Finding* near = find(findings, "near_slowdown_temperature");
  ASSERT_NE(near, nullptr);
  EXPECT_THAT(near->subjects, ElementsAre("bf16", "fp8"));
}

// An older record without the span: any slowdown beyond the power limit counts.
TEST(BurnRulesTest, WithoutTheSpanAnyUnexpectedThrottleCounts) {
  GemmSpan old = capped("fp32", 0, 0);
  old.span_s.reset();
  old.throttle_s["hw_slowdown"] = 0.01;
  auto findings = burn_findings({old}, 0, std::nullopt);
  ASSERT_NE(find(findings, "throttled"), nullptr);
}

TEST(BurnRulesTest, WrongResultsLowRatesAndSkippedPrecisions) {
  GemmSpan wrong = capped("bf16", 6, 0);
  wrong.errors = 2;
  GemmSpan slow = capped("fp64", 6, 0);
  slow.fraction_of_peak = 0.3;
  slow.peak_flop_per_s = 67e12;
  GemmSpan skipped;
  skipped.precision = "fp8";
  skipped.skipped = "needs compute capability 8.9";
  auto findings = burn_findings({wrong, slow, skipped}, 0, std::nullopt);
  ASSERT_GE(findings.size(), 3u);
  EXPECT_EQ(findings[0].id, "wrong_results");
  EXPECT_EQ(findings[0].severity, Severity::error);
  const Finding* low = find(findings, "low_fraction_of_peak");
  ASSERT_NE(low, nullptr);
  EXPECT_THAT(low->subjects, ElementsAre("fp64"));
  const Finding* not_measured = find(findings, "not_measured");
  ASSERT_NE(not_measured, nullptr);
  EXPECT_THAT(text(*not_measured), HasSubstr("needs compute capability 8.9"));
}

}  // namespace
}  // namespace gpuscope::analysis
