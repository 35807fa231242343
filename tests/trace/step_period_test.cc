#include "trace/step_period.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace gpuscope::trace::detail {
namespace {

struct Sequence {
  std::vector<std::uint32_t> names;
  std::vector<std::int64_t> gaps;
};

// `steps` repetitions of `step`; the kernel at index `first` of each step follows a long gap
// (the host waited for data), the others a few microseconds.
Sequence repeat(const std::vector<std::uint32_t>& step, int steps, std::size_t first,
                std::size_t skip_front = 0) {
  Sequence s;
  for (int i = 0; i < steps; ++i) {
    for (std::size_t k = 0; k < step.size(); ++k) {
      s.names.push_back(step[k]);
      s.gaps.push_back(k == first ? 5'000'000 : 3'000);
    }
  }
  s.names.erase(s.names.begin(), s.names.begin() + static_cast<long>(skip_front));
  s.gaps.erase(s.gaps.begin(), s.gaps.begin() + static_cast<long>(skip_front));
  return s;
}

// A transformer-like step: 12 identical blocks of 6 kernels, a head, a loss, an optimizer.
std::vector<std::uint32_t> transformer_step() {
  std::vector<std::uint32_t> step = {100};  // embedding
  for (int b = 0; b < 12; ++b) step.insert(step.end(), {1, 2, 3, 4, 5, 6});
  step.insert(step.end(), {200, 201});  // head, loss
  for (int b = 0; b < 12; ++b) step.insert(step.end(), {16, 15, 14, 13, 12, 11});
  step.insert(step.end(), {300, 301, 302});  // optimizer
  return step;
}

TEST(StepPeriod, FindsTheStepNotOneOfItsRepeatedBlocks) {
  const auto step = transformer_step();
  Sequence s = repeat(step, 10, 0);
  auto p = find_step_period(s.names, s.gaps);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->period, step.size());
  EXPECT_EQ(p->phase, 0u);
  EXPECT_EQ(p->steps, 10u);
  EXPECT_GT(p->score, 0.99);
}

TEST(StepPeriod, ThePhaseFollowsTheLongIdleGapWhereverTheWindowStarts) {
  const auto step = transformer_step();
  // The window opened mid-step: 40 kernels of the first step are missing.
  Sequence s = repeat(step, 8, 0, 40);
  auto p = find_step_period(s.names, s.gaps);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->period, step.size());
  EXPECT_EQ(p->phase, step.size() - 40);
  EXPECT_EQ(p->steps, 7u);
}

TEST(StepPeriod, ToleratesAFewKernelsThatDifferBetweenSteps) {
  auto step = transformer_step();
  Sequence s = repeat(step, 12, 0);
  // An occasional extra-looking kernel in place of another (e.g. a skipped scaler update).
  s.names[5 * step.size() + 100] = 999;
  s.names[9 * step.size() + 3] = 998;
  auto p = find_step_period(s.names, s.gaps);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->period, step.size());
}

TEST(StepPeriod, NoPeriodInRandomKernels) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> name(0, 40);
  Sequence s;
  for (int i = 0; i < 3000; ++i) s.names.push_back(name(rng)), s.gaps.push_back(1000);
  EXPECT_FALSE(find_step_period(s.names, s.gaps).has_value());
}

TEST(StepPeriod, TooFewStepsIsNoAnswer) {
  Sequence s = repeat(transformer_step(), 2, 0);
  EXPECT_FALSE(find_step_period(s.names, s.gaps).has_value());
  EXPECT_FALSE(find_step_period({}, {}).has_value());
}

TEST(StepPeriod, WithoutGapsThePhaseIsTheSequenceStart) {
  Sequence s = repeat({1, 2, 3, 9}, 20, 0);
  auto p = find_step_period(s.names, {});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->period, 4u);
  EXPECT_EQ(p->phase, 0u);
}

}  // namespace
}  // namespace gpuscope::trace::detail
