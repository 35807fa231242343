// Child processes: exit codes, signals, missing programs, the environment, line splitting,
// timeouts and interrupt forwarding, with /bin/sh scripts as children.
#include "gpuscope/process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace gpuscope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Captured {
  ProcessExit exit;
  std::vector<std::string> out, err;
};

ProcessOptions shell(const std::string& script) {
  ProcessOptions o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

// Runs `options` capturing stdout (and stderr, as lines); fails the test if it cannot start.
Captured capture(ProcessOptions options) {
  Captured c;
  options.on_stdout_line = [&c](std::string_view line) { c.out.emplace_back(line); };
  options.stderr_mode = StderrMode::lines;
  options.on_stderr_line = [&c](std::string_view line) { c.err.emplace_back(line); };
  Result<ProcessExit> exit = run_process(std::move(options));
  EXPECT_TRUE(exit.ok()) << exit.status().to_string();
  if (exit.ok()) c.exit = *exit;
  return c;
}

TEST(Process, ReportsTheExitCode) {
  Captured ok = capture(shell("echo hello"));
  EXPECT_EQ(ok.exit.exit_code, 0);
  EXPECT_TRUE(ok.exit.success());
  EXPECT_FALSE(ok.exit.term_signal);
  EXPECT_THAT(ok.out, ElementsAre("hello"));

  Captured three = capture(shell("exit 3"));
  EXPECT_EQ(three.exit.exit_code, 3);
  EXPECT_FALSE(three.exit.success());
  EXPECT_EQ(three.exit.describe(), "exit code 3");
}

TEST(Process, ReportsTheSignalThatKilledTheChild) {
  Captured c = capture(shell("echo before; kill -SEGV $$; echo after"));
  EXPECT_FALSE(c.exit.exit_code);
  EXPECT_EQ(c.exit.term_signal, SIGSEGV);
  EXPECT_THAT(c.out, ElementsAre("before"));
  EXPECT_EQ(c.exit.describe(), "killed by signal 11 (SIGSEGV)");
}

TEST(Process, AMissingProgramIsNotFound) {
  ProcessOptions by_path;
  by_path.argv = {"/nonexistent/gpuscope-no-such-program"};
  Result<ProcessExit> r = run_process(by_path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Code::not_found);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/gpuscope-no-such-program"));
  EXPECT_THAT(r.status().message(), HasSubstr("no such file"));

  ProcessOptions by_name;
  by_name.argv = {"gpuscope-no-such-program-in-path"};
  r = run_process(by_name);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Code::not_found);
  EXPECT_THAT(r.status().message(), HasSubstr("$PATH"));
}

TEST(Process, AFileThatIsNotExecutableIsPermissionDenied) {
  const std::string path = ::testing::TempDir() + "/gpuscope_not_executable.sh";
  std::ofstream(path) << "#!/bin/sh\necho no\n";
  chmod(path.c_str(), 0644);
  ProcessOptions o;
  o.argv = {path};
  Result<ProcessExit> r = run_process(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Code::permission_denied) << r.status().to_string();
}

TEST(Process, EmptyArgvIsInvalid) {
  EXPECT_EQ(run_process(ProcessOptions{}).code(), Code::invalid_argument);
  ProcessOptions lines_without_callback = shell("true");
  lines_without_callback.stderr_mode = StderrMode::lines;
  EXPECT_EQ(run_process(lines_without_callback).code(), Code::invalid_argument);
}

TEST(Process, AnEmptyProgramNameIsNotFound) {
  // As a shell answers for '' (127), not an invalid call.
  ProcessOptions o;
  o.argv = {""};
  Result<ProcessExit> r = run_process(o);
  EXPECT_EQ(r.code(), Code::not_found);
  EXPECT_EQ(check_program("").code(), Code::not_found);
}

TEST(Process, AFileInAnUnknownFormatIsNotExecutable) {
  const std::string path = ::testing::TempDir() + "/gpuscope_unknown_format";
  std::ofstream(path, std::ios::binary) << std::string("\x01\x02\x03\0\0\0garbage", 13);
  chmod(path.c_str(), 0755);
  EXPECT_TRUE(check_program(path).ok());  // found and executable: only exec can tell
  ProcessOptions o;
  o.argv = {path};
  Result<ProcessExit> r = run_process(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Code::permission_denied) << r.status().to_string();  // was io_error
  EXPECT_THAT(r.status().message(), HasSubstr("not an executable format"));
}

TEST(Process, CheckProgramSaysWhyAProgramCannotRun) {
  EXPECT_TRUE(check_program("sh").ok());
  EXPECT_TRUE(check_program("/bin/sh").ok());
  EXPECT_EQ(check_program("gpuscope-no-such-program-in-path").code(), Code::not_found);
  EXPECT_EQ(check_program("/nonexistent/program").code(), Code::not_found);
  Status directory = check_program("/");
  EXPECT_EQ(directory.code(), Code::permission_denied);
  EXPECT_THAT(directory.message(), HasSubstr("a directory"));
}

TEST(CommandExitCode, IsWhatAShellAnswers) {
  ProcessExit exited;
  exited.exit_code = 7;
  EXPECT_EQ(command_exit_code(exited), 7);
  ProcessExit killed;
  killed.term_signal = SIGKILL;
  EXPECT_EQ(command_exit_code(killed), 128 + SIGKILL);
  EXPECT_EQ(command_start_exit_code(Status(Code::not_found, "x")), 127);
  EXPECT_EQ(command_start_exit_code(Status(Code::permission_denied, "x")), 126);
  EXPECT_EQ(command_start_exit_code(Status(Code::io_error, "pipe2: too many open files")),
            std::nullopt);
}

TEST(Process, TheChildGetsTheDefaultFileSizeSignalBack) {
  // gpuscope ignores SIGXFSZ (a write past ulimit -f fails instead of killing it); an ignored
  // signal is inherited across exec, so the child must be given the default back.
  ignore_file_size_signal();
  Captured c = capture(shell("grep SigIgn /proc/self/status"));
  signal(SIGXFSZ, SIG_DFL);
  ASSERT_EQ(c.out.size(), 1u);
  const unsigned long long ignored =
      std::stoull(c.out[0].substr(c.out[0].find('\t') + 1), nullptr, 16);
  EXPECT_EQ(ignored & (1ULL << (SIGXFSZ - 1)), 0u) << c.out[0];
}

TEST(Process, SearchesThePathForABareName) {
  ProcessOptions o;
  o.argv = {"sh", "-c", "echo found"};
  EXPECT_THAT(capture(o).out, ElementsAre("found"));
}

TEST(Process, PassesArgumentsWithoutAShell) {
  ProcessOptions o;
  o.argv = {"/bin/sh", "-c", "printf '%s\\n' \"$@\"", "sh", "a b", "$HOME", "*"};
  EXPECT_THAT(capture(o).out, ElementsAre("a b", "$HOME", "*"));
}

TEST(Process, SetsAndUnsetsEnvironmentVariables) {
  setenv("GPUSCOPE_TEST_INHERITED", "inherited", 1);
  setenv("GPUSCOPE_TEST_REMOVED", "present", 1);
  setenv("GPUSCOPE_TEST_REPLACED", "old", 1);
  ProcessOptions o = shell(
      "echo \"$GPUSCOPE_TEST_INHERITED\"; echo \"${GPUSCOPE_TEST_REMOVED-unset}\"; "
      "echo \"$GPUSCOPE_TEST_REPLACED\"; echo \"$CUDA_VISIBLE_DEVICES\"; env | grep -c "
      "GPUSCOPE_TEST_REPLACED=");
  o.set_env = {{"GPUSCOPE_TEST_REPLACED", "new"}, {"CUDA_VISIBLE_DEVICES", "MIG-1234"}};
  o.unset_env = {"GPUSCOPE_TEST_REMOVED"};
  EXPECT_THAT(capture(o).out, ElementsAre("inherited", "unset", "new", "MIG-1234", "1"));
  // Nothing changed in this process.
  EXPECT_STREQ(getenv("GPUSCOPE_TEST_REPLACED"), "old");
  EXPECT_STREQ(getenv("GPUSCOPE_TEST_REMOVED"), "present");
}

TEST(Process, JoinsLinesWrittenInPiecesAndDeliversALastPartialLine) {
  Captured c = capture(
      shell("printf 'he'; sleep 0.05; printf 'llo\\nwor'; sleep 0.05; printf 'ld\\n\\nlast'"));
  EXPECT_THAT(c.out, ElementsAre("hello", "world", "", "last"));
}

TEST(Process, CapturesStderrLinesApartFromStdout) {
  Captured c = capture(shell("echo out; echo err1 >&2; echo err2 >&2"));
  EXPECT_THAT(c.out, ElementsAre("out"));
  EXPECT_THAT(c.err, ElementsAre("err1", "err2"));
}

TEST(Process, DiscardsStderr) {
  ProcessOptions o = shell("echo out; echo err >&2");
  std::vector<std::string> out;
  o.on_stdout_line = [&](std::string_view line) { out.emplace_back(line); };
  o.stderr_mode = StderrMode::discard;
  Result<ProcessExit> r = run_process(o);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(out, ElementsAre("out"));
}

TEST(Process, ReadsALotOfOutput) {
  std::vector<std::string> out;
  ProcessOptions o = shell("i=0; while [ $i -lt 20000 ]; do echo line$i; i=$((i+1)); done");
  o.on_stdout_line = [&](std::string_view line) { out.emplace_back(line); };
  ASSERT_TRUE(run_process(o).ok());
  ASSERT_EQ(out.size(), 20000u);
  EXPECT_EQ(out.front(), "line0");
  EXPECT_EQ(out.back(), "line19999");
}

TEST(Process, KillsAChildThatOutlivesItsTimeout) {
  ProcessOptions o = shell("echo started; sleep 10");
  o.own_process_group = true;  // so the sleep goes too
  o.timeout_seconds = 0.2;
  const auto start = std::chrono::steady_clock::now();
  Captured c = capture(o);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(c.exit.timed_out);
  EXPECT_EQ(c.exit.term_signal, SIGTERM);
  EXPECT_LT(took, 3.0);
  EXPECT_THAT(c.exit.describe(), HasSubstr("timed out"));
  EXPECT_THAT(c.out, ElementsAre("started"));
}

TEST(Process, SendsSigkillWhenSigtermIsIgnored) {
  ProcessOptions o = shell("trap '' TERM; while :; do sleep 0.05; done");
  o.own_process_group = true;
  o.timeout_seconds = 0.1;
  o.kill_grace_seconds = 0.2;
  Captured c = capture(o);
  EXPECT_TRUE(c.exit.timed_out);
  EXPECT_EQ(c.exit.term_signal, SIGKILL);
}

TEST(Process, AGrandchildHoldingStdoutDoesNotBlockWait) {
  ProcessOptions o = shell("sleep 5 & echo hi");
  o.linger_seconds = 0.2;
  const auto start = std::chrono::steady_clock::now();
  Captured c = capture(o);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(c.exit.exit_code, 0);
  EXPECT_THAT(c.out, ElementsAre("hi"));
  EXPECT_LT(took, 3.0);
}

TEST(Process, SendSignalReachesTheChild) {
  ProcessOptions o =
      shell("trap 'echo got USR1; exit 5' USR1; echo ready; while :; do sleep 0.02; done");
  std::vector<std::string> out;
  ChildProcess* self = nullptr;
  o.on_stdout_line = [&](std::string_view line) {
    out.emplace_back(line);
    if (line == "ready") {
      EXPECT_TRUE(self->send_signal(SIGUSR1).ok());
    }
  };
  auto child = ChildProcess::start(o);
  ASSERT_TRUE(child.ok()) << child.status().to_string();
  self = child->get();
  Result<ProcessExit> r = (*child)->wait();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 5);
  EXPECT_THAT(out, ElementsAre("ready", "got USR1"));
  EXPECT_TRUE((*child)->send_signal(SIGUSR1).ok());    // reaped: no effect, no error
  EXPECT_EQ((*child)->wait().code(), Code::internal);  // only once
}

TEST(Process, DestroyingARunningChildKillsIt) {
  pid_t pid = 0;
  {
    auto child = ChildProcess::start(shell("sleep 10"));
    ASSERT_TRUE(child.ok());
    pid = (*child)->pid();
    EXPECT_EQ(kill(pid, 0), 0);
  }
  EXPECT_EQ(kill(pid, 0), -1);  // reaped: gone
}

TEST(InterruptForwarding, SendsCtrlCOnToTheChildOnce) {
  auto forwarding = InterruptForwarding::install();
  ASSERT_TRUE(forwarding.ok()) << forwarding.status().to_string();
  ProcessOptions o = shell(
      "n=0; trap 'n=$((n+1))' INT; echo ready; "
      "while [ $n -eq 0 ]; do sleep 0.02; done; sleep 0.2; echo interrupts=$n; exit 7");
  o.own_process_group = true;
  o.forward_interrupts = true;
  std::vector<std::string> out;
  o.on_stdout_line = [&](std::string_view line) {
    out.emplace_back(line);
    if (line == "ready") raise(SIGINT);  // as a terminal's Ctrl-C would reach this process
  };
  Result<ProcessExit> r = run_process(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_THAT(out, ElementsAre("ready", "interrupts=1"));
  EXPECT_EQ(InterruptForwarding::signals_received(), 1);
  EXPECT_EQ(InterruptForwarding::last_signal(), SIGINT);
}

TEST(InterruptForwarding, TheThirdSignalKillsChildren) {
  auto forwarding = InterruptForwarding::install();
  ASSERT_TRUE(forwarding.ok());
  ProcessOptions o = shell("trap '' INT TERM; echo ready; while :; do sleep 0.02; done");
  o.own_process_group = true;
  o.forward_interrupts = true;
  o.on_stdout_line = [](std::string_view line) {
    if (line != "ready") return;
    raise(SIGINT);
    raise(SIGTERM);
    raise(SIGINT);
  };
  Result<ProcessExit> r = run_process(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_EQ(InterruptForwarding::signals_received(), 3);
}

TEST(InterruptForwarding, OnlyOneAtATimeAndHandlersAreRestored) {
  {
    auto first = InterruptForwarding::install();
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(InterruptForwarding::install().code(), Code::internal);
  }
  struct sigaction current {};
  sigaction(SIGINT, nullptr, &current);
  EXPECT_EQ(current.sa_handler, SIG_DFL);
  auto again = InterruptForwarding::install();
  EXPECT_TRUE(again.ok());
}

TEST(LineSplitter, SplitsLongLinesIntoPieces) {
  std::vector<std::string> lines;
  LineSplitter splitter([&](std::string_view line) { lines.emplace_back(line); }, 4);
  splitter.feed("abcdefghij\nxy");
  splitter.feed("z\n12345");
  splitter.finish();
  EXPECT_THAT(lines, ElementsAre("abcd", "efgh", "ij", "xyz", "1234", "5"));
}

TEST(Signals, HaveNames) {
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(63), "signal 63");
}

}  // namespace
}  // namespace gpuscope
