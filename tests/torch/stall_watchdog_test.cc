// The copy-engine all-reduce's watchdog decides on the counter the device bumps once a step
// (distributed/stall_watchdog.h); its thread and host-mapped counter need a GPU
// (bench/multi_device.sh fault).
#include "distributed/stall_watchdog.h"

#include <gtest/gtest.h>

namespace gpuscope::workloads {
namespace {

TEST(StallCounter, TheStartupIsNotWatched) {
  StallCounter counter(3);
  for (int read = 0; read < 100; ++read) EXPECT_FALSE(counter.stalled(0)) << read;
}

TEST(StallCounter, AStallIsTheLimitOfReadsWithoutAStep) {
  StallCounter counter(3);
  EXPECT_FALSE(counter.stalled(1));  // the first step ended
  EXPECT_FALSE(counter.stalled(1));
  EXPECT_FALSE(counter.stalled(1));
  EXPECT_TRUE(counter.stalled(1));  // three reads in a row saw no step
}

TEST(StallCounter, EveryStepStartsTheCountAgain) {
  StallCounter counter(2);
  for (uint64_t step = 1; step < 50; ++step) {
    EXPECT_FALSE(counter.stalled(step));
    EXPECT_FALSE(counter.stalled(step)) << "one read without a step is not yet a stall";
  }
  EXPECT_TRUE(counter.stalled(49));
}

}  // namespace
}  // namespace gpuscope::workloads
