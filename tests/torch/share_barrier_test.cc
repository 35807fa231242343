#include "share_barrier.h"

#include "input/files.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace gpuscope::workloads {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class ShareBarrierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("share-barrier-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    remove_tree(dir_.string());  // std::filesystem::remove_all is broken in libtorch's copy
    ::unsetenv("GPUSCOPE_SHARE_GO_FILE");
    ::unsetenv("GPUSCOPE_SHARE_COPY");
    ::unsetenv("GPUSCOPE_SHARE_COPIES");
  }
  std::string go() const { return (dir_ / "go").string(); }
  fs::path dir_;
};

TEST_F(ShareBarrierTest, OnlyACopyOfATrialOfTwoOrMoreMeets) {
  EXPECT_FALSE(ShareBarrier::from_environment());
  ::setenv("GPUSCOPE_SHARE_GO_FILE", go().c_str(), 1);
  EXPECT_FALSE(ShareBarrier::from_environment()) << "no copy count: started by hand, alone";
  ::setenv("GPUSCOPE_SHARE_COPY", "0", 1);
  ::setenv("GPUSCOPE_SHARE_COPIES", "1", 1);
  EXPECT_FALSE(ShareBarrier::from_environment()) << "one copy has nobody to wait for";
  ::setenv("GPUSCOPE_SHARE_COPIES", "4", 1);
  ::setenv("GPUSCOPE_SHARE_COPY", "4", 1);
  EXPECT_FALSE(ShareBarrier::from_environment()) << "copy 4 of 4 does not exist";
  ::setenv("GPUSCOPE_SHARE_COPY", "x", 1);
  EXPECT_FALSE(ShareBarrier::from_environment());
  ::setenv("GPUSCOPE_SHARE_COPY", "3", 1);
  const auto barrier = ShareBarrier::from_environment();
  ASSERT_TRUE(barrier);
  EXPECT_EQ(barrier->copy(), 3);
  EXPECT_EQ(barrier->copies(), 4);
}

TEST_F(ShareBarrierTest, AllArrivedOnlyWhenEveryCopyHasMarkedThatPhase) {
  const ShareBarrier a(go(), 0, 3), b(go(), 1, 3), c(go(), 2, 3);
  a.arrive("warm");
  b.arrive("warm");
  c.arrive("done");  // another phase does not count
  EXPECT_FALSE(a.all_arrived("warm"));
  c.arrive("warm");
  EXPECT_TRUE(a.all_arrived("warm"));
  EXPECT_TRUE(c.all_arrived("warm"));
  EXPECT_FALSE(a.all_arrived("done"));
}

TEST_F(ShareBarrierTest, AWaitEndsWhenTheLastCopyComes) {
  const ShareBarrier first(go(), 0, 2), last(go(), 1, 2);
  first.arrive("warm");
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(100));
    last.arrive("warm");
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(first.wait_all("warm", nullptr, milliseconds(20000)));
  later.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(90));
}

TEST_F(ShareBarrierTest, ACopyThatNeverComesOrAStopEndsTheWaitUnmet) {
  const ShareBarrier alone(go(), 0, 2);
  alone.arrive("warm");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(alone.wait_all("warm", nullptr, milliseconds(150)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
  std::atomic<bool> stop{true};
  EXPECT_FALSE(alone.wait_all("warm", &stop, milliseconds(60000)));
}

}  // namespace
}  // namespace gpuscope::workloads
