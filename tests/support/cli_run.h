// Running a program from a CLI test: its exit code and both streams, captured through files.
#pragma once

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace gpuscope::testing {

struct CliRun {
  int exit_code = -1;  // -1: ended by a signal
  std::string out, err;
};

// The whole file, byte for byte; empty when it cannot be read.
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Runs `command` (a /bin/sh command line) with stdin from /dev/null, its stdout and stderr
// going to `base`.out and `base`.err, which are read back. REQUIRES: `base` is unique to the
// calling test process (CTest runs tests in parallel processes).
inline CliRun run_captured(const std::string& command, const std::string& base) {
  const std::string out = base + ".out", err = base + ".err";
  const int status = std::system((command + " >" + out + " 2>" + err + " </dev/null").c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(out);
  run.err = slurp(err);
  return run;
}

// Runs `command` as run_captured() does, its capture files in `dir` named after this process
// (CTest runs tests in parallel processes) and a count of the calls (a test may run several).
inline CliRun run_in(const std::string& dir, const std::string& command) {
  static int calls = 0;
  return run_captured(command,
                      dir + "/run" + std::to_string(getpid()) + "-" + std::to_string(++calls));
}

#if defined(GPUSCOPE_BIN)
// Runs `gpuscope ARGS` (a /bin/sh argument string) with `env` (KEY=VALUE ...) added to its
// environment, as run_in(dir, ...) does.
inline CliRun run_gpuscope(const std::string& dir, const std::string& env,
                           const std::string& args) {
  return run_in(dir, "env " + env + " " + GPUSCOPE_BIN + " " + args);
}
#endif

// Starts `argv` (its first word a path) in the background, with this process's environment and
// `env` (KEY=VALUE ...) added, stdin from /dev/null, stdout and stderr to the files `out` and
// `err`. Returns its PID, or -1 where it could not be started.
inline pid_t spawn_captured(const std::vector<std::string>& argv, const std::string& out,
                            const std::string& err, const std::vector<std::string>& env = {}) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<std::string> words = argv;
  std::vector<char*> envp, args;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (std::string& a : words) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Polls every 20 ms until `done` holds, for up to `seconds`; whether it did.
inline bool eventually(const std::function<bool()>& done, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// A command line a test expects refused: its arguments, and a part of what it says on stderr
// ("" for anything).
struct Refusal {
  std::string args;
  std::string says;
};

// Expects `run(ARGS)` (a CliRun) to end with `exit_code` for each of `refusals`, saying its part.
template <class Run>
void expect_refused(const Run& run, int exit_code, const std::vector<Refusal>& refusals) {
  for (const Refusal& refusal : refusals) {
    const CliRun result = run(refusal.args);
    EXPECT_EQ(result.exit_code, exit_code) << refusal.args << "\n" << result.err;
    EXPECT_THAT(result.err, ::testing::HasSubstr(refusal.says)) << refusal.args;
  }
}

// A folder of the test binary `name` under GoogleTest's temporary directory, made if missing.
inline std::string scratch_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::create_directories(dir);
  return dir;
}

// A fresh folder of the running test's own, TempDir()/PREFIX_PID_TESTNAME: emptied when it was
// there (CTest runs tests in parallel processes; a test may run again in the same process).
inline std::string test_scratch_dir(const std::string& prefix) {
  const std::string dir = ::testing::TempDir() + "/" + prefix + "_" + std::to_string(getpid()) +
                          "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Whether a test may make a private mount namespace here (unshare -rm: a small tmpfs, a
// read-only remount); the tests that need one skip themselves where it may not.
inline bool can_unshare_mounts() {
  return std::system("unshare -rm true >/dev/null 2>&1") == 0;
}

#if defined(GPUSCOPE_FAKE_NVML_PATH) && defined(GPUSCOPE_TEST_FIXTURES)
// The environment (KEY=VALUE ...) that points gpuscope at the fake NVML playing `scenario`, a
// path under tests/fixtures ("nvml/h100_sxm.json").
inline std::string fake_nvml_env(const std::string& scenario) {
  return std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH +
         " GPUSCOPE_FAKE_NVML_SCENARIO=" + GPUSCOPE_TEST_FIXTURES + "/" + scenario;
}
#endif

// A path in `dir` for this test process (CTest runs tests in parallel processes) with nothing
// there yet: no file or folder, nor the -wal and -shm files of a SQLite store. Nothing is made.
inline std::string fresh_path(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + std::to_string(getpid()) + "-" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove_all(path + suffix);
  return path;
}

}  // namespace gpuscope::testing
