// observe::Process with /bin/sh scripts as children: the GPU it may use, the environment, the
// JSON-lines reader, watchers, the process tree, timeouts and stop() with a grace period, the
// exit-code policy, the Ctrl-C policy.
#include "gpuscope/observe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace gpuscope::observe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Options shell(const std::string& script) {
  Options o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

// Runs `options`, its stdout as lines into `out`.
Outcome run_capturing(Options options, std::vector<std::string>& out) {
  options.on_stdout_line = [&out](std::string_view line) { out.emplace_back(line); };
  return run(std::move(options));
}

TEST(Observe, TheVisibleDevicesAreSetForTheChildOnly) {
  std::vector<std::string> out;
  Options o = shell("echo \"[$CUDA_VISIBLE_DEVICES]\"");
  o.visible_devices = "MIG-6a1e2c3d-0000-1111-2222-333344445555";
  Outcome end = run_capturing(std::move(o), out);
  ASSERT_TRUE(end.started()) << end.start_status.to_string();
  EXPECT_THAT(out, ElementsAre("[MIG-6a1e2c3d-0000-1111-2222-333344445555]"));
}

TEST(Observe, WithoutVisibleDevicesTheVariableIsInherited) {
  ::setenv("CUDA_VISIBLE_DEVICES", "GPU-inherited", 1);
  std::vector<std::string> out;
  Outcome end = run_capturing(shell("echo \"[$CUDA_VISIBLE_DEVICES]\""), out);
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_TRUE(end.success());
  EXPECT_THAT(out, ElementsAre("[GPU-inherited]"));
}

TEST(Observe, AddsAndRemovesEnvironmentVariables) {
  ::setenv("GPUSCOPE_OBSERVE_TEST_GONE", "here", 1);
  std::vector<std::string> out;
  Options o = shell("echo \"$A-$B-[$GPUSCOPE_OBSERVE_TEST_GONE]\"");
  o.env = {{"A", "1"}, {"B", "two words"}};
  o.unset_env = {"GPUSCOPE_OBSERVE_TEST_GONE"};
  Outcome end = run_capturing(std::move(o), out);
  ::unsetenv("GPUSCOPE_OBSERVE_TEST_GONE");
  EXPECT_TRUE(end.success());
  EXPECT_THAT(out, ElementsAre("1-two words-[]"));
}

// NVLink multicast stays off in every process gpuscope starts (the lent machines ask it), unless
// the user set the variable, or the caller does.
TEST(Observe, NcclNvlsIsOffUnlessTheUserOrTheCallerSaysOtherwise) {
  const std::string script = "echo \"[$NCCL_NVLS_ENABLE]\"";
  ::unsetenv("NCCL_NVLS_ENABLE");
  std::vector<std::string> out;
  EXPECT_TRUE(run_capturing(shell(script), out).success());
  ::setenv("NCCL_NVLS_ENABLE", "1", 1);
  EXPECT_TRUE(run_capturing(shell(script), out).success());
  Options o = shell(script);
  o.env = {{"NCCL_NVLS_ENABLE", "2"}};
  EXPECT_TRUE(run_capturing(std::move(o), out).success());
  ::unsetenv("NCCL_NVLS_ENABLE");
  EXPECT_THAT(out, ElementsAre("[0]", "[1]", "[2]"));
}

TEST(Observe, ArgumentsReachTheProgramWithoutAShell) {
  std::vector<std::string> out;
  Options o;
  o.argv = {"/bin/echo", "$HOME", "a;b", "*"};
  Outcome end = run_capturing(std::move(o), out);
  EXPECT_TRUE(end.success());
  EXPECT_THAT(out, ElementsAre("$HOME a;b *"));
}

TEST(Observe, ReadsJsonLinesOnTheCallersClock) {
  struct Seen {
    std::string text;
    bool object = false;
    double at = 0;
    std::string type;
  };
  std::vector<Seen> seen;
  double now = 10;
  Options o = shell(
      R"(echo '{"type":"start","v":1}'; echo 'plain text'; echo '[1,2]'; echo '{"type":"result"}')");
  o.clock = [&now] { return now += 1; };
  o.on_json_line = [&seen](const JsonLine& line) {
    Seen s{std::string(line.text), line.object != nullptr, line.received_s, ""};
    if (line.object) s.type = line.object->value("type", "");
    seen.push_back(s);
  };
  Outcome end = run(std::move(o));
  EXPECT_TRUE(end.success());
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_TRUE(seen[0].object);
  EXPECT_EQ(seen[0].type, "start");
  EXPECT_EQ(seen[0].at, 11);
  EXPECT_FALSE(seen[1].object);
  EXPECT_EQ(seen[1].text, "plain text");
  EXPECT_FALSE(seen[2].object);  // JSON, but not an object
  EXPECT_TRUE(seen[3].object);
  EXPECT_EQ(seen[3].type, "result");
  EXPECT_EQ(seen[3].at, 14);
}

TEST(Observe, WithoutAClockLinesAreStampedFromTheStart) {
  std::vector<double> at;
  Options o = shell("echo '{}'; sleep 0.3; echo '{}'");
  o.on_json_line = [&at](const JsonLine& line) { at.push_back(line.received_s); };
  EXPECT_TRUE(run(std::move(o)).success());
  ASSERT_EQ(at.size(), 2u);
  EXPECT_GE(at[0], 0);
  EXPECT_LT(at[0], 0.25);
  EXPECT_GE(at[1], 0.25);
}

TEST(Observe, StdoutIsReadOneWayOnly) {
  Options o = shell("true");
  o.on_json_line = [](const JsonLine&) {};
  o.on_stdout_line = [](std::string_view) {};
  Outcome end = run(std::move(o));
  EXPECT_FALSE(end.started());
  EXPECT_EQ(end.start_status.code(), Code::invalid_argument);
}

TEST(Observe, KeepsTheLastStderrLines) {
  std::vector<std::string> all;
  Options o = shell("for i in 1 2 3 4 5; do echo line$i >&2; done");
  o.stderr_mode = StderrMode::lines;
  o.stderr_tail_lines = 2;
  o.on_stderr_line = [&all](std::string_view line) { all.emplace_back(line); };
  Outcome end = run(std::move(o));
  EXPECT_TRUE(end.success());
  EXPECT_THAT(end.stderr_tail, ElementsAre("line4", "line5"));
  EXPECT_EQ(all.size(), 5u);
}

TEST(Observe, TheStderrTailNeedsNoCallback) {
  Options o = shell("echo only >&2; exit 4");
  o.stderr_mode = StderrMode::lines;
  o.stderr_tail_lines = 5;
  Outcome end = run(std::move(o));
  ASSERT_TRUE(end.started());
  EXPECT_EQ(end.exit.exit_code, 4);
  EXPECT_THAT(end.stderr_tail, ElementsAre("only"));
}

class Recording : public Watcher {
 public:
  void started(pid_t pid) override {
    pid_ = pid;
    events.push_back("started");
  }
  void ended(const ProcessExit& exit) override { events.push_back("ended " + exit.describe()); }
  pid_t pid_ = 0;
  std::vector<std::string> events;
};

TEST(Observe, WatchersSeeTheWholeLife) {
  Recording watcher;
  std::vector<std::string> lines;
  Options o = shell("echo out; exit 2");
  o.watchers = {&watcher};
  o.on_stdout_line = [&](std::string_view line) {
    watcher.events.push_back("line " + std::string(line));
  };
  Outcome end = run(std::move(o));
  ASSERT_TRUE(end.started());
  EXPECT_EQ(watcher.pid_, end.pid);
  EXPECT_GT(end.pid, 0);
  EXPECT_THAT(watcher.events, ElementsAre("started", "line out", "ended exit code 2"));
}

TEST(Observe, WatchersAreNotToldOfAProcessThatNeverStarted) {
  Recording watcher;
  Options o;
  o.argv = {"/nonexistent/gpuscope-observe-test"};
  o.watchers = {&watcher};
  Outcome end = run(std::move(o));
  EXPECT_FALSE(end.started());
  EXPECT_TRUE(watcher.events.empty());
}

TEST(Observe, TheExitCodePolicyIsAShells) {
  EXPECT_EQ(run(shell("exit 3")).command_exit_code(), 3);
  EXPECT_EQ(run(shell("kill -TERM $$")).command_exit_code(), 128 + SIGTERM);
  Options missing;
  missing.argv = {"gpuscope-no-such-program-anywhere"};
  Outcome not_found = run(std::move(missing));
  EXPECT_EQ(not_found.start_status.code(), Code::not_found);
  EXPECT_EQ(not_found.command_exit_code(), 127);
  Options directory;
  directory.argv = {"/tmp"};
  EXPECT_EQ(run(std::move(directory)).command_exit_code(), 126);
}

TEST(Observe, TimeoutSendsSigtermThenSigkillAfterTheGrace) {
  Options polite = shell("sleep 30");
  polite.timeout_seconds = 0.2;
  Outcome a = run(std::move(polite));
  EXPECT_TRUE(a.exit.timed_out);
  EXPECT_EQ(a.exit.term_signal, SIGTERM);

  Options stubborn = shell("trap '' TERM; sleep 30 & wait; sleep 30");
  stubborn.timeout_seconds = 0.2;
  stubborn.kill_grace_seconds = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  Outcome b = run(std::move(stubborn));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(b.exit.timed_out);
  EXPECT_EQ(b.exit.term_signal, SIGKILL);
  EXPECT_GE(took, 0.45);
  EXPECT_LT(took, 5);
}

TEST(Observe, StopEndsItGentlyFirst) {
  auto started =
      Process::start(shell("trap 'echo term; exit 7' TERM; while :; do sleep 0.05; done"));
  ASSERT_TRUE(started.ok());
  std::unique_ptr<Process> p = std::move(started).value();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the trap is set
  EXPECT_FALSE(p->done());
  Outcome end = p->stop(5);
  EXPECT_EQ(end.exit.exit_code, 7);
  EXPECT_TRUE(p->done());
}

TEST(Observe, StopKillsWhatIgnoresSigterm) {
  auto started = Process::start(shell("trap '' TERM; while :; do sleep 0.05; done"));
  ASSERT_TRUE(started.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Outcome end = (*started)->stop(0.2);
  EXPECT_EQ(end.exit.term_signal, SIGKILL);
}

TEST(Observe, TheProcessTreeHoldsItsDescendants) {
  std::atomic<pid_t> grandchild{0};
  Options o = shell("sleep 5 & echo $!; wait");
  o.on_stdout_line = [&grandchild](std::string_view line) {
    grandchild = static_cast<pid_t>(std::stol(std::string(line)));
  };
  auto started = Process::start(std::move(o));
  ASSERT_TRUE(started.ok());
  std::unique_ptr<Process> p = std::move(started).value();
  for (int i = 0; i < 200 && grandchild == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(grandchild.load(), 0);
  EXPECT_TRUE(p->in_tree(p->pid()));
  EXPECT_TRUE(p->in_tree(grandchild));
  EXPECT_FALSE(p->in_tree(::getpid()));
  EXPECT_FALSE(p->in_tree(1));
  (void)p->stop(1);  // the group: the grandchild too
}

// The child's process group, read from /proc/$$/stat (field 5).
pid_t child_group(Interrupts interrupts) {
  std::vector<std::string> out;
  Options o = shell("cut -d' ' -f5 /proc/$$/stat");
  o.interrupts = interrupts;
  EXPECT_TRUE(run_capturing(std::move(o), out).success());
  return out.empty() ? -1 : static_cast<pid_t>(std::stol(out[0]));
}

TEST(Observe, TheCtrlCPolicyDecidesTheProcessGroup) {
  EXPECT_NE(child_group(Interrupts::forward), ::getpgrp());
  EXPECT_NE(child_group(Interrupts::isolate), ::getpgrp());
  EXPECT_EQ(child_group(Interrupts::share), ::getpgrp());
}

TEST(Observe, AnInterruptIsForwardedOnceAndReported) {
  auto forwarding = InterruptForwarding::install();
  ASSERT_TRUE(forwarding.ok()) << forwarding.status().to_string();
  std::vector<std::string> out;
  Options o = shell("trap 'echo got INT; exit 5' INT; echo ready; while :; do sleep 0.05; done");
  o.on_stdout_line = [&out](std::string_view line) {
    out.emplace_back(line);
    if (line == "ready") ::kill(::getpid(), SIGINT);
  };
  Outcome end = run(std::move(o));
  EXPECT_TRUE(end.interrupted);
  EXPECT_EQ(end.exit.exit_code, 5);
  EXPECT_THAT(out, ElementsAre("ready", "got INT"));

  // The next process is not told of an interrupt that came before it.
  Outcome next = run(shell("true"));
  EXPECT_FALSE(next.interrupted);
}

TEST(Observe, IsolatedProcessesAreNotSentInterrupts) {
  auto forwarding = InterruptForwarding::install();
  ASSERT_TRUE(forwarding.ok()) << forwarding.status().to_string();
  Options o = shell("trap 'exit 5' INT; echo ready; sleep 0.5; exit 0");
  o.interrupts = Interrupts::isolate;
  o.on_stdout_line = [](std::string_view line) {
    if (line == "ready") ::kill(::getpid(), SIGINT);
  };
  Outcome end = run(std::move(o));
  EXPECT_EQ(end.exit.exit_code, 0);
  EXPECT_TRUE(end.interrupted);  // gpuscope was interrupted meanwhile; the child was not
}

}  // namespace
}  // namespace gpuscope::observe
