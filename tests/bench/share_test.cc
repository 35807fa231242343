// `bench --share` in pieces: its options, the answer from trials (gains, how many copies pay
// off, MPS against time slicing, what does not fit, MIG), and the MPS daemon's life with the
// fake nvidia-cuda-mps-control (tests/fakes/mps): started under the run folder, stopped with its
// folders and journal, a system daemon refused or used, a control program that fails, leftovers
// of a gpuscope that is gone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/share_mps.h"
#include "gpuscope/bench_share.h"
#include "support/scratch_dir.h"

extern char** environ;

namespace gpuscope::bench {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ShareTrial trial(ShareMode mode, int copies, std::optional<double> total, int oom = 0) {
  ShareTrial t;
  t.mode = mode;
  t.copies = copies;
  t.total_samples_per_second = total;
  t.out_of_memory = oom;
  t.fits = oom == 0;
  t.overlapped = true;
  return t;
}

TEST(ShareOptions, CountsAreSortedAndChecked) {
  EXPECT_THAT(*parse_share_counts("1,2,4"), ElementsAre(1, 2, 4));
  EXPECT_THAT(*parse_share_counts("8,1,2,2"), ElementsAre(1, 2, 8));
  for (const char* bad : {"", "0", "x", "65", "1,,2", "2.5"}) {
    auto parsed = parse_share_counts(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.code(), Code::invalid_argument);
  }
}

TEST(ShareOptions, AllMeansMigOnlyOnAGpuInMigMode) {
  EXPECT_THAT(*parse_share_modes("all", false), ElementsAre(ShareMode::timeslice, ShareMode::mps));
  EXPECT_THAT(*parse_share_modes("all", true), ElementsAre(ShareMode::mig));
  EXPECT_THAT(*parse_share_modes("mps,timeslice,mps", false),
              ElementsAre(ShareMode::mps, ShareMode::timeslice));
  auto bad = parse_share_modes("timeslice,vgpu", false);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'vgpu'"));
}

// The H100's numbers of issue 17: ResNet-50 batch 16, 2524 alone, four time-sliced 2578, four
// under MPS 4682; eight under MPS out of memory (made up).
ShareResult h100_resnet() {
  ShareResult r;
  r.trials = {trial(ShareMode::timeslice, 1, 2524), trial(ShareMode::timeslice, 2, 2550),
              trial(ShareMode::timeslice, 4, 2578), trial(ShareMode::mps, 1, 2510),
              trial(ShareMode::mps, 2, 3900),       trial(ShareMode::mps, 4, 4682),
              trial(ShareMode::mps, 8, 4700, 3)};
  summarize_share(r);
  return r;
}

TEST(ShareSummary, GainsAgainstOneProcessAlone) {
  const ShareResult r = h100_resnet();
  ASSERT_TRUE(r.alone_samples_per_second);
  EXPECT_DOUBLE_EQ(*r.alone_samples_per_second, 2524);
  EXPECT_NEAR(*r.trials[2].gain, 2578.0 / 2524, 1e-9);
  EXPECT_NEAR(*r.trials[5].gain, 4682.0 / 2524, 1e-9);
}

TEST(ShareSummary, SaysHowManyCopiesPayOffAndWhatMpsGives) {
  const ShareResult r = h100_resnet();
  EXPECT_THAT(r.pays_off_up_to,
              ElementsAre(std::pair(ShareMode::timeslice, 1), std::pair(ShareMode::mps, 4)));
  ASSERT_TRUE(r.mps_over_timeslice);
  EXPECT_NEAR(*r.mps_over_timeslice, 4682.0 / 2578, 1e-9);  // 8 copies did not fit: not counted
  EXPECT_THAT(r.answer, HasSubstr("Up to 4 copies pay off (MPS: 1.85x the throughput of one "
                                  "process alone); MPS gives 1.82x over time slicing here."));
  EXPECT_THAT(r.answer, HasSubstr("8 copies do not fit in memory under MPS (3 ran out)."));
}

TEST(ShareSummary, NoGainSaysSo) {
  ShareResult r;
  r.trials = {trial(ShareMode::timeslice, 1, 1000), trial(ShareMode::timeslice, 2, 1020),
              trial(ShareMode::timeslice, 4, 990)};
  summarize_share(r);
  EXPECT_THAT(r.pays_off_up_to, ElementsAre(std::pair(ShareMode::timeslice, 1)));
  EXPECT_FALSE(r.mps_over_timeslice);
  EXPECT_THAT(r.answer, HasSubstr("Sharing does not pay off here"));
}

TEST(ShareSummary, AStepThatGainsTooLittleEndsThePayingRun) {
  ShareResult r;
  r.trials = {trial(ShareMode::mps, 1, 1000), trial(ShareMode::mps, 2, 1500),
              trial(ShareMode::mps, 4, 1520), trial(ShareMode::mps, 8, 1900)};
  summarize_share(r);
  EXPECT_THAT(r.pays_off_up_to, ElementsAre(std::pair(ShareMode::mps, 2)));
}

TEST(ShareSummary, MigInstancesTogether) {
  ShareResult r;
  ShareTrial mig = trial(ShareMode::mig, 3, 7000);
  for (double rate : {4000.0, 2000.0, 1000.0}) {
    ShareCopy c;
    c.row.samples_per_second = rate;
    c.together_samples_per_second = rate;
    mig.runs.push_back(c);
  }
  r.trials = {mig};
  summarize_share(r);
  EXPECT_FALSE(mig.gain);
  EXPECT_THAT(r.answer, HasSubstr("3 instances together 7000.0 samples/s (1000.0 to 4000.0 per "
                                  "instance)"));
}

// A private folder for one test, removed afterwards; short, for the daemon's socket paths.
class MpsDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ + "/run");
    fs::create_directories(dir_ + "/proc");    // no MPS processes in it
    fs::create_directories(dir_ + "/system");  // no control socket in it
    ::setenv("GPUSCOPE_FAKE_MPS_LOG", (dir_ + "/mps.log").c_str(), 1);
    ::setenv("GPUSCOPE_FAKE_MPS_SERVER_NAME", "fake-unit-mps-server", 1);
    ::unsetenv("GPUSCOPE_FAKE_MPS_FAIL");
    ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    o_.control_program = GPUSCOPE_FAKE_MPS_CONTROL;
    o_.system_pipe_dir = dir_ + "/system";
    o_.proc_dir = dir_ + "/proc";
    o_.state_dir = dir_ + "/state";
  }
  void TearDown() override { ::unsetenv("GPUSCOPE_FAKE_MPS_FAIL"); }
  std::string log() const {
    std::ifstream in(dir_ + "/mps.log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  gpuscope::testing::ScratchDir scratch_{"/tmp/gst-mps-"};  // short: the daemon's sockets
  const std::string dir_ = scratch_.path().string();
  MpsOptions o_;
};

TEST_F(MpsDaemonTest, APrivateDaemonLivesUnderTheRunFolderAndGoesWithItsFolders) {
  o_.active_thread_percentage = 40;
  auto daemon = detail::MpsDaemon::start(o_, dir_ + "/run");
  ASSERT_TRUE(daemon.ok()) << daemon.status().message();
  const std::string pipe = dir_ + "/run/mps-pipe";
  EXPECT_THAT(log(), HasSubstr("start " + pipe + " " + dir_ + "/run/mps-log"));
  EXPECT_TRUE(fs::exists(pipe + "/control"));
  EXPECT_THAT(
      (*daemon)->client_env(),
      ElementsAre(
          std::pair<std::string, std::string>("CUDA_MPS_PIPE_DIRECTORY", pipe),
          std::pair<std::string, std::string>("CUDA_MPS_LOG_DIRECTORY", dir_ + "/run/mps-log"),
          std::pair<std::string, std::string>("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "40")));
  const std::string journal = detail::mps_journal_path(o_.state_dir, ::getpid());
  ASSERT_TRUE(fs::exists(journal));
  EXPECT_EQ(detail::read_mps_journal(journal)->pipe_dir, pipe);
  EXPECT_THAT((*daemon)->description(), HasSubstr("private (pipe folder " + pipe));
  daemon->reset();
  EXPECT_THAT(log(), HasSubstr("quit " + pipe));
  EXPECT_FALSE(fs::exists(pipe));
  EXPECT_FALSE(fs::exists(dir_ + "/run/mps-log"));
  EXPECT_FALSE(fs::exists(journal));
}

TEST_F(MpsDaemonTest, ASystemDaemonIsRefusedUnlessAskedFor) {
  std::ofstream(dir_ + "/system/control").put('\n');
  auto refused = detail::MpsDaemon::start(o_, dir_ + "/run");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Code::invalid_argument);
  EXPECT_THAT(refused.status().message(), HasSubstr("an MPS daemon is already running"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--mps-daemon system"));
  o_.use_system = true;
  auto used = detail::MpsDaemon::start(o_, dir_ + "/run");
  ASSERT_TRUE(used.ok()) << used.status().message();
  EXPECT_THAT((*used)->description(), HasSubstr("system (control socket " + dir_ + "/system"));
  EXPECT_TRUE((*used)->client_env().empty());
  used->reset();
  EXPECT_EQ(log(), "");  // never started nor stopped
  EXPECT_TRUE(fs::exists(dir_ + "/system/control"));
}

TEST_F(MpsDaemonTest, AServerProcessCountsAsARunningDaemon) {
  fs::create_directories(dir_ + "/proc/4242");
  std::ofstream(dir_ + "/proc/4242/cmdline")
      << std::string("/usr/bin/nvidia-cuda-mps-server\0", 32);
  std::ofstream(dir_ + "/proc/4242/environ")
      << std::string("CUDA_MPS_PIPE_DIRECTORY=/tmp/other\0", 35);
  auto found = detail::find_running_mps(o_.system_pipe_dir, o_.proc_dir);
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, "process 4242 (nvidia-cuda-mps-server)");
  EXPECT_FALSE(detail::find_running_mps(o_.system_pipe_dir, o_.proc_dir, "/tmp/other"));
  EXPECT_THAT(detail::mps_processes_of("/tmp/other", o_.proc_dir), ElementsAre(4242));
}

TEST_F(MpsDaemonTest, AMissingControlProgramSaysWhatMpsNeeds) {
  o_.control_program = dir_ + "/nowhere/nvidia-cuda-mps-control";
  auto missing = detail::MpsDaemon::start(o_, dir_ + "/run");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.code(), Code::not_found);
  EXPECT_THAT(missing.status().message(), HasSubstr("part of the NVIDIA driver"));
}

TEST_F(MpsDaemonTest, ADaemonThatFailsToStartLeavesNothing) {
  ::setenv("GPUSCOPE_FAKE_MPS_FAIL", "1", 1);
  auto failed = detail::MpsDaemon::start(o_, dir_ + "/run");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), Code::internal);
  EXPECT_THAT(failed.status().message(), HasSubstr("no CUDA-capable device (fake)"));
  EXPECT_FALSE(fs::exists(dir_ + "/run/mps-pipe"));
  EXPECT_FALSE(fs::exists(detail::mps_journal_path(o_.state_dir, ::getpid())));
}

// A pid that no process has any more: a child that has been reaped.
pid_t gone_pid() {
  pid_t pid = 0;
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ);
  waitpid(pid, nullptr, 0);
  return pid;
}

TEST_F(MpsDaemonTest, TheNextStartStopsTheDaemonOfAGpuscopeThatIsGone) {
  detail::MpsJournal j;
  j.pid = gone_pid();
  j.control_program = GPUSCOPE_FAKE_MPS_CONTROL;
  j.run_dir = dir_ + "/run";
  j.pipe_dir = dir_ + "/run/mps-pipe";
  j.log_dir = dir_ + "/run/mps-log";
  j.proc_dir = o_.proc_dir;
  const std::string start = "CUDA_MPS_PIPE_DIRECTORY=" + j.pipe_dir +
                            " CUDA_MPS_LOG_DIRECTORY=" + j.log_dir + " " + j.control_program +
                            " -d";
  ASSERT_EQ(std::system(start.c_str()), 0);
  ASSERT_TRUE(fs::exists(j.pipe_dir + "/control"));
  ASSERT_TRUE(detail::write_mps_journal(detail::mps_journal_path(o_.state_dir, j.pid), j).ok());
  // A journal of this very process (alive) is not touched.
  detail::MpsJournal mine = j;
  mine.pid = ::getpid();
  ASSERT_TRUE(
      detail::write_mps_journal(detail::mps_journal_path(o_.state_dir, mine.pid), mine).ok());

  std::ostringstream out;
  auto stopped = stop_leftover_mps(o_.state_dir, out);
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  EXPECT_EQ(*stopped, 1);
  EXPECT_THAT(out.str(), HasSubstr("stopped the private MPS daemon left by gpuscope process " +
                                   std::to_string(j.pid)));
  EXPECT_THAT(log(), HasSubstr("quit " + j.pipe_dir));
  EXPECT_FALSE(fs::exists(j.pipe_dir));
  EXPECT_FALSE(fs::exists(j.run_dir));
  EXPECT_FALSE(fs::exists(detail::mps_journal_path(o_.state_dir, j.pid)));
  EXPECT_TRUE(fs::exists(detail::mps_journal_path(o_.state_dir, mine.pid)));
}

}  // namespace
}  // namespace gpuscope::bench
