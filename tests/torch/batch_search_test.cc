#include "batch_search.h"

#include <gtest/gtest.h>

#include <set>

namespace gpuscope::workloads {
namespace {

// A device that holds batches up to `capacity`: anything larger runs out of memory.
BatchProbe device_with_capacity(int64_t capacity, std::vector<int64_t>* tried = nullptr) {
  return [capacity, tried](int64_t batch) {
    if (tried != nullptr) tried->push_back(batch);
    if (batch <= capacity) return ProbeResult{ProbeOutcome::fits, ""};
    return ProbeResult{ProbeOutcome::out_of_memory, "CUDA out of memory (simulated)"};
  };
}

TEST(BatchSearch, FindsTheLargestMultipleThatFits) {
  for (const int64_t capacity : {32, 33, 100, 161, 1000, 1023, 4096}) {
    BatchSearchOptions options;
    options.start = 32;
    const auto result = find_largest_batch(device_with_capacity(capacity), options);
    ASSERT_TRUE(result.batch.has_value()) << capacity;
    EXPECT_EQ(*result.batch, capacity / 8 * 8) << capacity;
  }
}

TEST(BatchSearch, NeverTriesTheSameBatchTwiceOrMoreThanTheMaximum) {
  std::vector<int64_t> tried;
  BatchSearchOptions options;
  options.start = 16;
  options.max = 300;
  const auto result = find_largest_batch(device_with_capacity(100'000, &tried), options);
  ASSERT_TRUE(result.batch.has_value());
  EXPECT_EQ(*result.batch, 300);
  EXPECT_EQ(std::set<int64_t>(tried.begin(), tried.end()).size(), tried.size());
  for (const int64_t b : tried) EXPECT_LE(b, 300);
  EXPECT_EQ(result.tries.size(), tried.size());
}

TEST(BatchSearch, HalvesBelowTheStartWhenTheStartDoesNotFit) {
  BatchSearchOptions options;
  options.start = 256;
  const auto result = find_largest_batch(device_with_capacity(5), options);
  ASSERT_TRUE(result.batch.has_value());
  EXPECT_EQ(*result.batch, 5);  // below `multiple`, any size
  EXPECT_EQ(result.tries.front().outcome, ProbeOutcome::out_of_memory);
}

TEST(BatchSearch, ReportsWhenNothingFits) {
  const auto result = find_largest_batch(device_with_capacity(0), BatchSearchOptions{});
  EXPECT_FALSE(result.batch.has_value());
  EXPECT_NE(result.failure.find("does not fit"), std::string::npos);
  EXPECT_EQ(result.tries.back().batch, 1);
}

TEST(BatchSearch, StopsAtAFailureThatIsNotOutOfMemory) {
  int calls = 0;
  const BatchProbe probe = [&](int64_t batch) {
    ++calls;
    if (batch > 64) return ProbeResult{ProbeOutcome::failed, "illegal memory access"};
    return ProbeResult{ProbeOutcome::fits, ""};
  };
  const auto result = find_largest_batch(probe, BatchSearchOptions{});
  EXPECT_FALSE(result.batch.has_value());
  EXPECT_NE(result.failure.find("illegal memory access"), std::string::npos);
  EXPECT_EQ(calls, 3);  // 32, 64, 128
}

}  // namespace
}  // namespace gpuscope::workloads
