#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpuscope/analysis.h"

namespace gpuscope::analysis {
namespace {

Finding make(std::string id, Severity severity, std::vector<std::string> subjects,
             std::optional<GainRange> gain = std::nullopt) {
  Finding finding;
  finding.id = std::move(id);
  finding.severity = severity;
  finding.title = "title of " + finding.id;
  finding.fix = "fix of " + finding.id;
  finding.subjects = std::move(subjects);
  finding.expected_speedup = gain;
  return finding;
}

TEST(FindingTest, SameConclusionForSeveralSubjectsIsOneFinding) {
  auto merged = merge_same({make("power_capped", Severity::info, {"fp32"}),
                            make("power_capped", Severity::info, {"bf16", "fp32"}),
                            make("throttled", Severity::warning, {"fp16"}),
                            make("power_capped", Severity::info, {"fp8"})});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].subjects, (std::vector<std::string>{"fp32", "bf16", "fp8"}));
  EXPECT_EQ(merged[1].id, "throttled");
}

TEST(FindingTest, MergingFindingsOfTwoGpusForgetsTheGpu) {
  auto a = make("throttled", Severity::warning, {"GPU 0"});
  a.gpu = 0;
  auto b = make("throttled", Severity::warning, {"GPU 1"});
  b.gpu = 1;
  auto merged = merge_same({a, b});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_FALSE(merged[0].gpu.has_value());
}

TEST(FindingTest, RankPutsErrorsFirstThenTheLargestExpectedGain) {
  std::vector<Finding> findings = {make("healthy", Severity::info, {}),
                                   make("small_batch", Severity::warning, {}, GainRange{1.1, 1.3}),
                                   make("input_bound", Severity::warning, {}, GainRange{2.0, 4.0}),
                                   make("broken", Severity::error, {}),
                                   make("throttled", Severity::warning, {})};
  rank(findings);
  std::vector<std::string> order;
  for (const auto& finding : findings) order.push_back(finding.id);
  EXPECT_EQ(order, (std::vector<std::string>{"broken", "input_bound", "small_batch", "throttled",
                                             "healthy"}));
}

TEST(FindingTest, JsonRoundTripKeepsEveryField) {
  auto finding = make("input_bound", Severity::warning, {"rank 0"}, GainRange{1.5, 3.0});
  finding.evidence = {{"GPU busy", 7.5, "%"}, {"data wait per step", 42, "ms"}};
  finding.confidence = Confidence::high;
  finding.gpu = 2;
  const auto json = to_json(finding);
  EXPECT_EQ(json.at("severity"), "warning");
  EXPECT_EQ(json.at("expected_speedup").at("high"), 3.0);
  const auto back = finding_from_json(json);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->id, finding.id);
  EXPECT_EQ(back->evidence.size(), 2u);
  EXPECT_EQ(back->evidence[1].unit, "ms");
  EXPECT_EQ(back->expected_speedup->low, 1.5);
  EXPECT_EQ(back->confidence, Confidence::high);
  EXPECT_EQ(back->gpu, 2);
  EXPECT_EQ(back->subjects, finding.subjects);
}

TEST(FindingTest, MalformedJsonGivesNothing) {
  EXPECT_FALSE(finding_from_json(nlohmann::json::array()));
  EXPECT_FALSE(finding_from_json({{"id", "x"}, {"severity", "fatal"}, {"title", "t"}}));
  EXPECT_FALSE(finding_from_json({{"id", "x"},
                                  {"severity", "info"},
                                  {"title", "t"},
                                  {"expected_speedup", {{"low", 3}, {"high", 2}}}}));
  EXPECT_FALSE(finding_from_json({{"id", ""}, {"severity", "info"}, {"title", "t"}}));
}

}  // namespace
}  // namespace gpuscope::analysis
