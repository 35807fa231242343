// Running a program from a CLI test: its exit code and both streams, captured through files.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

#if defined(GPUSCOPE_FAKE_NVML_PATH) && defined(GPUSCOPE_TEST_FIXTURES)
// The environment (KEY=VALUE ...) that points gpuscope at the fake NVML playing `scenario`, a
// path under tests/fixtures ("nvml/h100_sxm.json").
inline std::string fake_nvml_env(const std::string& scenario) {
  return std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH +
         " GPUSCOPE_FAKE_NVML_SCENARIO=" + GPUSCOPE_TEST_FIXTURES + "/" + scenario;
}
#endif

// A path in `dir` for this test process (CTest runs tests in parallel processes) with nothing
// there yet: no file, nor the -wal and -shm files of a SQLite store.
inline std::string fresh_path(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + std::to_string(getpid()) + "-" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

}  // namespace gpuscope::testing
