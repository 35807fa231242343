#include "trace/thread_cpu.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gpuscope::trace::detail {
namespace {

namespace fs = std::filesystem;

// A /proc laid out as the kernel does, with the fields thread_cpu reads.
class FakeProc {
 public:
  FakeProc() : root_(fs::path(::testing::TempDir()) / ("proc-" + std::to_string(getpid()))) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakeProc() { fs::remove_all(root_); }
  void thread(int pid, int ppid, int tid, const std::string& name, long utime, long stime) {
    const fs::path p = root_ / std::to_string(pid);
    fs::create_directories(p / "task" / std::to_string(tid));
    const std::string stat = stat_line(pid, name, ppid, utime, stime);
    if (tid == pid) {
      std::ofstream(p / "stat") << stat;
      std::ofstream(p / "comm") << name << '\n';
    }
    std::ofstream(p / "task" / std::to_string(tid) / "stat")
        << stat_line(tid, name, ppid, utime, stime);
    std::ofstream(p / "task" / std::to_string(tid) / "comm") << name << '\n';
  }
  void remove(int pid) { fs::remove_all(root_ / std::to_string(pid)); }
  std::string path() const { return root_.string(); }

 private:
  static std::string stat_line(int pid, const std::string& name, int ppid, long utime, long stime) {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    return std::to_string(pid) + " (" + name + ") S " + std::to_string(ppid) +
           " 1 1 0 -1 0 0 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) +
           " 0 0 20 0 1 0 100\n";
  }
  fs::path root_;
};

TEST(ThreadCpu, AttributesTimeToMainOtherAndDescendantThreads) {
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  FakeProc proc;
  proc.thread(100, 1, 100, "python (tricky) x", 10, 0);
  proc.thread(100, 1, 101, "pt_pin_memory", 0, 0);
  proc.thread(200, 100, 200, "python", 0, 0);  // a loader worker
  proc.thread(300, 1, 300, "unrelated", 0, 0);
  ThreadCpuTracker tracker(100, proc.path());
  tracker.sample();
  proc.thread(100, 1, 100, "python (tricky) x", 10 + 50, 10);
  proc.thread(100, 1, 101, "pt_pin_memory", 5, 0);
  proc.thread(200, 100, 200, "python", 200, 0);
  proc.thread(300, 1, 300, "unrelated", 999, 0);
  tracker.sample();
  proc.thread(201, 200, 201, "grandchild", 30, 0);  // appears later: all its time counts
  tracker.sample();
  proc.remove(200);  // the worker ended: what it used is kept
  tracker.sample();

  auto use = tracker.use();
  auto by_role = cpu_by_role(use);
  EXPECT_NEAR(by_role[ThreadRole::main], 60 / tick, 1e-9);
  EXPECT_NEAR(by_role[ThreadRole::other], 5 / tick, 1e-9);
  EXPECT_NEAR(by_role[ThreadRole::descendant], 230 / tick, 1e-9);
  ASSERT_FALSE(use.empty());
  EXPECT_EQ(use.front().pid, 200);  // most first
  for (const auto& t : use) EXPECT_NE(t.pid, 300);
  EXPECT_EQ(tracker.samples(), 4);
}

TEST(ThreadCpu, ReadsTheRealProcForABusyChild) {
  int done[2];
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Spin until 0.2 s of CPU time is used (however loaded the machine), say so, then wait.
    timespec cpu{};
    volatile unsigned long x = 0;
    do {
      for (int i = 0; i < 100000; ++i) x = x + 1;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    } while (cpu.tv_sec == 0 && cpu.tv_nsec < 200'000'000);
    (void)!write(done[1], "x", 1);
    pause();
    _exit(0);
  }
  ThreadCpuTracker tracker(getpid());
  tracker.sample();
  char byte = 0;
  ASSERT_EQ(read(done[0], &byte, 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // /proc's tick accounting
  tracker.sample();
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  close(done[0]);
  close(done[1]);
  auto by_role = cpu_by_role(tracker.use());
  EXPECT_GT(by_role[ThreadRole::descendant], 0.1);  // the child spun; we mostly slept
  EXPECT_LT(by_role[ThreadRole::descendant], 5.0);
}

}  // namespace
}  // namespace gpuscope::trace::detail
