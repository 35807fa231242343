// The journal, the per-GPU lock and the RAII guard, in process against the fake NVML.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "gpuscope/sweep.h"
#include "support/cli_run.h"
#include "support/fake_nvml_fixture.h"
#include "sweep/journal.h"
#include "sweep/limit_guard.h"

namespace gpuscope::sweep {
namespace {

using ::testing::HasSubstr;

class JournalTest : public gpuscope::testing::FakeNvmlTest {
 protected:
  void SetUp() override {
    FakeNvmlTest::SetUp();
    dir_ = gpuscope::testing::scratch_dir("sweep_journal_test") + "/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(detail::ensure_state_dir(dir_).ok());
    load("rtx3090_power_sweep.json");
    session_ = open();
    ASSERT_NE(session_, nullptr);
    ::setenv("GPUSCOPE_NVML_LIBRARY", GPUSCOPE_FAKE_NVML_PATH, 1);
  }

  detail::JournalEntry entry() const {
    detail::JournalEntry e;
    e.uuid = "GPU-7c1e9a52-3b6d-4e8f-a0b1-c2d3e4f5a6b7";
    e.name = "NVIDIA GeForce RTX 3090";
    e.prior_limit_w = 390;
    e.pid = 4242;
    return e;
  }

  std::string dir_;
  std::unique_ptr<nvml::Session> session_;
};

TEST_F(JournalTest, RoundTripsAndRefusesADamagedFile) {
  ASSERT_TRUE(detail::write_journal(dir_, entry()).ok());
  const std::string path = detail::journal_path(dir_, entry().uuid);
  auto back = detail::read_journal(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->prior_limit_w, 390);
  EXPECT_EQ(back->pid, 4242);
  EXPECT_EQ(detail::list_journals(dir_), std::vector<std::string>{path});
  std::ofstream(path) << "{\"kind\": \"gpuscope.sweep.journal\", \"vers";
  EXPECT_EQ(detail::read_journal(path).code(), Code::data_error);
}

TEST_F(JournalTest, OneHolderPerGpu) {
  auto first = detail::GpuLock::acquire(dir_, entry().uuid, false);
  ASSERT_TRUE(first.ok());
  auto second = detail::GpuLock::acquire(dir_, entry().uuid, false);
  EXPECT_EQ(second.code(), Code::io_error);
  EXPECT_THAT(second.status().message(),
              HasSubstr("another sweep (pid " + std::to_string(getpid())));
  first->reset();
  EXPECT_TRUE(detail::GpuLock::acquire(dir_, entry().uuid, false).ok());
}

TEST_F(JournalTest, TheGuardRestoresThePriorLimitWhenAnExceptionLeavesTheSweep) {
  ASSERT_TRUE(detail::write_journal(dir_, entry()).ok());
  auto device = session_->device_by_index(0);
  ASSERT_TRUE(device.ok());
  try {
    detail::LimitGuard guard(*session_, dir_, {entry()});
    ASSERT_TRUE(device->set_power_limit_w(250).ok());
    ASSERT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 250000u);
    throw std::runtime_error("a bug in the middle of a sweep");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 390000u);  // the prior, not the 480 W max
  EXPECT_TRUE(detail::list_journals(dir_).empty());
}

TEST_F(JournalTest, LeftoversAreRestoredUnlessTheirSweepStillHoldsTheGpu) {
  auto device = session_->device_by_index(0);
  ASSERT_TRUE(device.ok());
  ASSERT_TRUE(device->set_power_limit_w(200).ok());
  ASSERT_TRUE(detail::write_journal(dir_, entry()).ok());
  {
    auto held = detail::GpuLock::acquire(dir_, entry().uuid, false);
    ASSERT_TRUE(held.ok());
    std::ostringstream out;
    EXPECT_EQ(restore_leftover_limits(dir_, out).value_or(-1), 0);  // its sweep runs
    EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 200000u);
  }
  std::ostringstream out;
  EXPECT_EQ(restore_leftover_limits(dir_, out).value_or(-1), 1);
  EXPECT_THAT(out.str(), HasSubstr("restored GPU 0"));
  EXPECT_THAT(out.str(), HasSubstr("390 W"));
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 390000u);
  EXPECT_TRUE(detail::list_journals(dir_).empty());
  EXPECT_EQ(restore_leftover_limits(dir_, out).value_or(-1), 0);
}

TEST_F(JournalTest, AClockEntryRecordsUnlockedAndIsUndoneWithAReset) {
  detail::JournalEntry clocks = entry();
  clocks.knob = Knob::locked_clocks;
  clocks.prior_limit_w = 0;
  ASSERT_TRUE(detail::write_journal(dir_, clocks).ok());
  const std::string path = detail::journal_path(dir_, clocks.uuid, Knob::locked_clocks);
  EXPECT_THAT(path, HasSubstr("/locked-clocks-GPU-"));
  EXPECT_EQ(detail::list_journals(dir_), std::vector<std::string>{path});
  auto back = detail::read_journal(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->knob, Knob::locked_clocks);
  EXPECT_EQ(detail::prior_setting(*back), "unlocked SM clocks");

  auto device = session_->device_by_index(0);
  ASSERT_TRUE(device.ok());
  ASSERT_TRUE(device->set_locked_sm_clocks_mhz(1410, 1410).ok());
  ASSERT_EQ(gpuscope_fake_nvml_locked_clocks_mhz(0, nullptr, nullptr), 1);
  std::ostringstream out;
  EXPECT_EQ(restore_leftover_limits(dir_, out).value_or(-1), 1);
  EXPECT_THAT(out.str(), HasSubstr("restored GPU 0"));
  EXPECT_THAT(out.str(), HasSubstr("to unlocked SM clocks"));
  EXPECT_EQ(gpuscope_fake_nvml_locked_clocks_mhz(0, nullptr, nullptr), 0);
  EXPECT_EQ(gpuscope_fake_nvml_power_limit_set_mw(0), 0u);  // the limit is not touched
  EXPECT_TRUE(detail::list_journals(dir_).empty());
}

TEST_F(JournalTest, AnEntryFromBeforeClocksIsAPowerLimit) {
  const std::string path = detail::journal_path(dir_, entry().uuid);
  std::ofstream(path) << R"({"kind": "gpuscope.sweep.journal", "version": 1, "uuid": "GPU-1",
      "index": 0, "prior_power_limit_w": 350})";
  auto back = detail::read_journal(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->knob, Knob::power_limit);
  EXPECT_EQ(back->prior_limit_w, 350);
}

}  // namespace
}  // namespace gpuscope::sweep
