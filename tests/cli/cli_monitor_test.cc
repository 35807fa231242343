// `gpuscope monitor` end to end: the real binary with NVML replaced by the fake library. Command
// wrapping (exit codes, signals, a command that does not exist), every sink written by the
// binary, a /metrics scrape while it runs, a SIGKILL against the store, a second monitor on the
// same file, and sinks that fail mid-run (a full tmpfs, a file-size limit).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "../telemetry/prometheus_validator.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/monitor.h"
#include "gpuscope/store.h"
#include "support/cli_run.h"
#include "support/loopback_http.h"
#include "support/matchers.h"
#include "support/stored_runs.h"

namespace gpuscope {
namespace {

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::CliRun;
using testing::slurp;

std::string temp_dir() {
  return testing::scratch_dir("cli_monitor_test");
}

std::string fresh(const std::string& name) {
  return testing::fresh_path(temp_dir(), name);
}

std::string fake_env(const std::string& fixture = "telemetry/two_gpus.json") {
  return testing::fake_nvml_env(fixture);
}

// Runs a shell command line (gpuscope is $GPUSCOPE), capturing both streams.
CliRun shell(const std::string& script, const std::string& env = fake_env()) {
  return testing::run_in(temp_dir(),
                         "env " + env + " GPUSCOPE=" + GPUSCOPE_BIN + " sh -c '" + script + "'");
}

CliRun monitor(const std::string& args, const std::string& env = fake_env()) {
  return shell(std::string("exec \"$GPUSCOPE\" monitor ") + args, env);
}

// A gpuscope started in the background: its PID, and its streams in files.
struct Background {
  pid_t pid = -1;
  std::string out, err;
  int wait() {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

Background start(const std::vector<std::string>& args,
                 const std::string& fixture = "telemetry/two_gpus.json") {
  static int counter = 0;
  Background bg;
  bg.out = temp_dir() + "/bg" + std::to_string(getpid()) + "-" + std::to_string(++counter) + ".out";
  bg.err = bg.out + ".err";
  std::vector<std::string> argv = {
      "/usr/bin/env", std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH,
      std::string("GPUSCOPE_FAKE_NVML_SCENARIO=") + GPUSCOPE_TEST_FIXTURES + "/" + fixture,
      GPUSCOPE_BIN, "monitor"};
  argv.insert(argv.end(), args.begin(), args.end());
  bg.pid = testing::spawn_captured(argv, bg.out, bg.err);
  return bg;
}

bool wait_for(const std::function<bool()>& ready, double seconds = 10) {
  return testing::eventually(ready, seconds);
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every row has the header's number of cells: the file holds only whole rows.
void expect_whole_csv_rows(const std::string& path) {
  const auto lines = lines_of(path);
  ASSERT_FALSE(lines.empty());
  const auto cells = std::count(lines[0].begin(), lines[0].end(), ',');
  for (const std::string& line : lines) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), cells) << line;
  }
  EXPECT_EQ(slurp(path).back(), '\n');
}

TEST(CliMonitor, PlainSessionWritesItsSinksAndPrintsLinesAndASummary) {
  const std::string csv = fresh("plain.csv"), jsonl = fresh("plain.jsonl");
  CliRun run = monitor("--no-tui --duration 1.2 --interval 50 --csv " + csv + " --jsonl " + jsonl);
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasAllSubstrs({"#t_s gpu", "gpuscope monitor: 1.",
                                      "GPU 0  NVIDIA H100 80GB HBM3", "from the energy counter",
                                      "integrated from power (no energy counter)",  // GPU 1
                                      "GPU duty cycle", "sampler: "}));
  expect_whole_csv_rows(csv);
  EXPECT_GE(lines_of(csv).size(), 2u * 20);
  auto rec = telemetry::read_recording(jsonl);
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  EXPECT_EQ(rec->session.gpus.size(), 2u);
  EXPECT_TRUE(rec->summary.has_value());
}

TEST(CliMonitor, ReturnsTheCommandsExitCode) {
  EXPECT_EQ(monitor("-- true").exit_code, 0);
  EXPECT_EQ(monitor("-- false").exit_code, 1);
  CliRun seven = monitor("-- sh -c \"exit 7\"");
  EXPECT_EQ(seven.exit_code, 7);
  EXPECT_THAT(seven.err, HasSubstr("exit code 7"));  // the summary goes to stderr
  EXPECT_EQ(seven.out, "");                          // stdout stays the command's
  // Arguments reach the command as they are: no shell in between.
  CliRun args = monitor("-- printf \"%s|\" \"a b\" \"*\" \"\\$HOME\"");
  EXPECT_EQ(args.exit_code, 0);
  EXPECT_EQ(args.out, "a b|*|$HOME|");
}

TEST(CliMonitor, ACommandThatCannotRunIsAnsweredLikeAShell) {
  CliRun missing = monitor("-- gpuscope-no-such-command-xyz --flag");
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_THAT(missing.err, HasSubstr("cannot run gpuscope-no-such-command-xyz: command not found"));
  const std::string not_executable = fresh("not-executable");
  std::ofstream(not_executable) << "#!/bin/sh\n";
  CliRun denied = monitor("-- " + not_executable);
  EXPECT_EQ(denied.exit_code, 126);
  EXPECT_THAT(denied.err, HasSubstr("not an executable"));
  // An empty name is not found (sh -c "''" answers 127), a directory cannot be executed (126).
  CliRun empty = monitor("-- \"\"");
  EXPECT_EQ(empty.exit_code, 127) << empty.err;
  EXPECT_THAT(empty.err, HasSubstr("command not found"));
  CliRun directory = monitor("-- /");
  EXPECT_EQ(directory.exit_code, 126) << directory.err;
  EXPECT_THAT(directory.err, HasSubstr("a directory"));
}

TEST(CliMonitor, AFileInAnUnknownBinaryFormatIsNotExecutableAsAShellSays) {
  // Executable, but the system refuses it at exec (ENOEXEC): gpuscope answered 6.
  const std::string binary = fresh("unknown-format");
  std::ofstream(binary, std::ios::binary) << std::string("\x01\x02\x03\0\0\0garbage", 13);
  std::filesystem::permissions(binary, std::filesystem::perms::owner_all);
  CliRun run = monitor("-- " + binary);
  EXPECT_EQ(run.exit_code, 126) << run.err;
  EXPECT_THAT(run.err, HasSubstr("not an executable format"));
  EXPECT_THAT(run.err, HasSubstr("did not start"));  // the summary of the session still comes
}

TEST(CliMonitor, ACommandKilledByASignalExitsAsAShellWould) {
  CliRun run = monitor("-- sh -c \"kill -TERM \\$\\$\"");
  EXPECT_EQ(run.exit_code, 128 + SIGTERM);
  EXPECT_THAT(run.err, HasSubstr("SIGTERM"));
}

TEST(CliMonitor, InterruptsAreForwardedToTheCommand) {
  // SIGINT to gpuscope reaches the command, which handles it and chooses its exit code; the
  // summary still comes.
  Background bg = start({"--", "sh", "-c", "trap \"exit 5\" INT; sleep 30 & wait"});
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(bg.pid, SIGINT);
  EXPECT_EQ(bg.wait(), 5);
  EXPECT_THAT(slurp(bg.err), HasSubstr("exit code 5"));
  // A command that does not handle it dies of it: 128 + 2.
  Background plain = start({"--", "sleep", "30"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(plain.pid, SIGTERM);
  EXPECT_EQ(plain.wait(), 128 + SIGTERM);
}

TEST(CliMonitor, JsonSummaryCarriesItsSchema) {
  // With --json, stdout is the JSON document alone: the command's own stdout goes to stderr (on
  // the H100, `monitor --json -- gpuscope burn` printed burn's table before the JSON).
  CliRun run = monitor("--json -- sh -c \"echo the command says hello; sleep 0.4\"");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("the command says hello"));
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["kind"], "gpuscope.monitor.summary");
  EXPECT_EQ(j["schema_version"], telemetry::kSummarySchemaVersion);
  EXPECT_EQ(j["command"]["exit_code"], 0);
  EXPECT_EQ(j["command"]["argv"][0], "sh");
  // The fake's processes (PIDs 4242, 777) are not the command's: no GPU was used by it.
  EXPECT_EQ(j["command_gpus"], nlohmann::json::array());
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["energy_source"], "counter");
  EXPECT_EQ(j["gpus"][1]["energy_source"], "power_integral");
  EXPECT_TRUE(j["gpus"][0].contains("sm_activity_avg"));
  EXPECT_FALSE(j["gpus"][1].contains("sm_activity_avg"));  // no GPM: absent, not 0
  // Pinned keys: renaming one is a schema change.
  const auto pinned = nlohmann::json::parse(
      slurp(std::string(GPUSCOPE_TEST_FIXTURES) + "/telemetry/summary_schema_v1.json"));
  for (const auto& key : pinned["top_level"])
    EXPECT_TRUE(j.contains(key.get<std::string>())) << key;
  for (const auto& key : pinned["gpu"]) {
    EXPECT_TRUE(j["gpus"][0].contains(key.get<std::string>())) << key;
  }
}

TEST(CliMonitor, UsageErrors) {
  testing::expect_refused(
      [](const std::string& args) { return monitor(args); }, kExitUsage,
      {
          {"--duration 1 -- true", ""},
          // An empty address used to start no server, silently.
          {"--no-tui --duration 1 --listen \"\"", "--listen: must not be empty"},
          {"--interval 5 --duration 1", ""},
          {"--gpu 9 --duration 1", ""},
          // An index too long for an integer was "internal error: stoul" (exit 6).
          {"--no-tui --gpu 99999999999999999999999 --duration 1",
           "there is no GPU 99999999999999999999999"},
          {"--tui --no-tui --duration 1", ""},
      });
  CliRun no_driver =
      monitor("--duration 1", "GPUSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(no_driver.exit_code, kExitNoGpu);
}

TEST(CliMonitor, AnUnwritableSinkStopsItBeforeTheCommandRuns) {
  const std::string mark = fresh("mark");
  CliRun run = monitor("--csv /nonexistent-dir/out.csv -- touch " + mark);
  EXPECT_EQ(run.exit_code, kExitError);
  EXPECT_THAT(run.err, HasSubstr("/nonexistent-dir/out.csv: cannot create: No such file"));
  EXPECT_FALSE(std::filesystem::exists(mark));
}

// "the N rows written before are kept": N from a sink's failure message.
int rows_kept(const std::string& err) {
  const std::string tail = " rows written before are kept";
  const auto end = err.find(tail);
  if (end == std::string::npos) return -1;
  const auto start = err.rfind(' ', end - 1);
  return std::stoi(err.substr(start + 1, end - start - 1));
}

TEST(CliMonitor, AFileSizeLimitMidRunKeepsTheRowsWrittenAndTheCommandGoesOn) {
  // RLIMIT_FSIZE makes a write fail part-way, as a filling disk does. gpuscope used to die of
  // SIGXFSZ (exit 153) with a half-written row, its command orphaned and its exit code lost.
  const std::string csv = fresh("limited.csv"), done = fresh("done");
  CliRun run = shell("ulimit -f 24; exec \"$GPUSCOPE\" monitor --interval 20 --csv " + csv +
                     " -- sh -c \"sleep 2.5; touch " + done + "; exit 3\"");
  EXPECT_EQ(run.exit_code, 3) << run.err;  // the command's own exit code
  EXPECT_THAT(run.err, HasSubstr("File too large"));
  EXPECT_TRUE(std::filesystem::exists(done));  // the command ran to its end
  expect_whole_csv_rows(csv);
  EXPECT_GT(lines_of(csv).size(), 5u);
  // The count is of data rows: the header is not one.
  EXPECT_EQ(rows_kept(run.err), static_cast<int>(lines_of(csv).size()) - 1) << run.err;
}

TEST(CliMonitor, AFileSizeLimitWithoutACommandIsAFailedSinkNotADeath) {
  const std::string csv = fresh("limited-alone.csv");
  CliRun run = shell(
      "ulimit -f 24; exec \"$GPUSCOPE\" monitor --no-tui --duration 2.5 "
      "--interval 20 --csv " +
      csv);
  EXPECT_EQ(run.exit_code, kExitError) << run.err;  // was 153: killed by SIGXFSZ
  EXPECT_THAT(run.err, HasSubstr("File too large"));
  EXPECT_THAT(run.out, HasSubstr("gpuscope monitor: 2."));  // it ran its course, then the summary
  expect_whole_csv_rows(csv);
}

TEST(CliMonitor, TheCommandKeepsTheDefaultFileSizeSignal) {
  // gpuscope ignores SIGXFSZ for itself only: the command dies of it as it would unwrapped.
  const std::string big = fresh("big");
  CliRun run = shell(
      "ulimit -f 24; exec \"$GPUSCOPE\" monitor -- sh -c \"head -c 100000 "
      "/dev/zero >" +
      big + "\"");
  EXPECT_EQ(run.exit_code, 128 + SIGXFSZ) << run.err;
}

// Runs `gpuscope monitor ARGS` with a tmpfs of `size` mounted at `dir` (in a private mount
// namespace), then `after`, a shell command, there too; stdout has "rc=N", gpuscope's exit code.
CliRun monitor_on_tmpfs(const std::string& size, const std::string& dir, const std::string& args,
                        const std::string& after = "true") {
  std::filesystem::create_directories(dir);
  return shell("unshare -rm sh -c \"mount -t tmpfs -o size=" + size + " tmpfs " + dir +
               " && \\\"\\$GPUSCOPE\\\" monitor " + args + "; echo rc=\\$?; " + after + "\"");
}

TEST(CliMonitor, AFullTmpfsMidRunIsAClearErrorAndTheFileStaysReadable) {
  if (!testing::can_unshare_mounts()) {
    GTEST_SKIP() << "cannot make a private mount namespace here (unshare -rm)";
  }
  const std::string dir = temp_dir() + "/tmpfs", kept = fresh("tmpfs-kept.jsonl");
  CliRun run = monitor_on_tmpfs("48k", dir,
                                "--no-tui --interval 20 --duration 6 --jsonl " + dir + "/out.jsonl",
                                "cp " + dir + "/out.jsonl " + kept);
  EXPECT_THAT(run.out, HasSubstr("rc=6")) << run.err;
  EXPECT_THAT(run.err, HasSubstr("No space left on device"));
  // Whatever the full disk kept reads back: whole lines only.
  const auto lines = lines_of(kept);
  ASSERT_GT(lines.size(), 3u);
  for (const std::string& line : lines) {
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
  }
}

TEST(CliMonitor, WithoutACommandAFailedSinkEndsNothing) {
  // A full disk under the CSV file: the JSON-lines file and the session go on to --duration
  // (the session used to end at the CSV's first failed flush, about 1 s in).
  if (!testing::can_unshare_mounts()) {
    GTEST_SKIP() << "cannot make a private mount namespace here (unshare -rm)";
  }
  const std::string dir = temp_dir() + "/tmpfs-small", jsonl = fresh("goes-on.jsonl");
  CliRun run = monitor_on_tmpfs(
      "16k", dir, "--no-tui --interval 20 --duration 2.5 --csv " + dir + "/c.csv --jsonl " + jsonl);
  EXPECT_THAT(run.out, HasSubstr("rc=6")) << run.err;
  EXPECT_THAT(run.err, HasSubstr("No space left on device"));
  auto rec = telemetry::read_recording(jsonl);
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  ASSERT_FALSE(rec->samples.empty());
  EXPECT_GT(rec->samples.back().t_s, 2.0);
  ASSERT_TRUE(rec->summary.has_value());
  EXPECT_GT((*rec->summary)["wall_s"].get<double>(), 2.4);
}

TEST(CliMonitor, ASecondMonitorOnTheSameFileIsRefused) {
  const std::string csv = fresh("shared.csv");
  Background first = start({"--no-tui", "--duration", "2.5", "--csv", csv});
  ASSERT_TRUE(wait_for([&] { return lines_of(csv).size() >= 2; }));
  CliRun second = monitor("--no-tui --duration 1 --csv " + csv);
  EXPECT_EQ(second.exit_code, kExitError);
  EXPECT_THAT(second.err, HasSubstr("is being written by another process (PID"));
  EXPECT_EQ(first.wait(), 0);
  expect_whole_csv_rows(csv);
  EXPECT_GT(lines_of(csv).size(), 20u);  // the first one's rows, untouched
}

TEST(CliMonitor, TwoMonitorsShareOneStoreSafely) {
  const std::string db = fresh("shared.db");
  Background a = start({"--no-tui", "--duration", "1.5", "--interval", "50", "--store", db});
  Background b = start({"--no-tui", "--duration", "1.5", "--interval", "50", "--store", db});
  EXPECT_EQ(a.wait(), 0) << slurp(a.err);
  EXPECT_EQ(b.wait(), 0) << slurp(b.err);
  const auto runs = testing::stored_runs(db);
  ASSERT_EQ(runs.size(), 2u);
  for (const store::RunData& run : runs) {
    EXPECT_TRUE(run.run.ended_unix_s.has_value());
    EXPECT_FALSE(run.telemetry.empty());
  }
}

TEST(CliMonitor, TheStoreRunHasItsCommandLineAndDriverVersion) {
  // As info's runs have: which monitor invocation, on which driver.
  const std::string db = fresh("described.db");
  CliRun run = monitor("--store " + db + " -- sleep 0.3");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto runs = testing::stored_runs(db);
  ASSERT_EQ(runs.size(), 1u);
  const store::RunData& loaded = runs[0];
  EXPECT_THAT(loaded.run.command_line, HasSubstr(" monitor --store "));
  EXPECT_THAT(loaded.run.command_line, HasSubstr("-- sleep 0.3"));
  ASSERT_TRUE(loaded.run.driver_version.has_value());
  EXPECT_NE(*loaded.run.driver_version, "");
  EXPECT_TRUE(loaded.run.cuda_driver_version.has_value());
}

TEST(CliMonitor, TheStoreLosesAtMostASecondToSigkill) {
  const std::string db = fresh("killed.db");
  Background bg = start({"--no-tui", "--interval", "20", "--store", db});
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  kill(bg.pid, SIGKILL);
  const double killed_at = unix_now();
  EXPECT_EQ(bg.wait(), 128 + SIGKILL);
  const auto runs = testing::stored_runs(db);
  ASSERT_EQ(runs.size(), 1u);
  const store::RunData& run = runs[0];
  EXPECT_FALSE(run.run.ended_unix_s.has_value());  // it never finished
  double last = 0;
  for (const auto& series : run.telemetry) {
    if (!series.t_s.empty()) last = std::max(last, series.t_s.back());
  }
  const double lost = killed_at - (run.run.started_unix_s + last);
  EXPECT_GT(last, 1.0);
  EXPECT_LE(lost, 1.0) << "samples of the last " << lost << " s were lost";
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t length = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The body of GET /metrics, or "" when nothing answers.
std::string scrape(int port) {
  const std::string response =
      testing::loopback_http(port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
  const auto body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

TEST(CliMonitor, ServesPrometheusMetricsWhileItRuns) {
  // 2.5 s: two_gpus.json loses GPU 1 at 3 s.
  const int port = free_port();
  Background bg =
      start({"--no-tui", "--duration", "2.5", "--listen", "127.0.0.1:" + std::to_string(port)});
  std::string first;
  ASSERT_TRUE(wait_for([&] {
    first = scrape(port);
    return first.find("DCGM_FI_DEV_POWER_USAGE") != std::string::npos;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const std::string second = scrape(port);
  const auto a = testing_support::validate_exposition(first);
  const auto b = testing_support::validate_exposition(second);
  ASSERT_TRUE(a.errors.empty()) << a.errors.front() << "\n" << first;
  ASSERT_TRUE(b.errors.empty()) << b.errors.front() << "\n" << second;
  EXPECT_TRUE(testing_support::counters_did_not_decrease(a, b));
  for (const char* name :
       {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_FB_USED"}) {
    EXPECT_THAT(second, HasSubstr(std::string("\n") + name + "{")) << name;
  }
  EXPECT_EQ(b.types.at("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), "counter");
  EXPECT_THAT(second, HasSubstr("UUID=\"GPU-00000000-1111-2222-3333-444444444444\""));
  EXPECT_THAT(second, HasSubstr("Hostname=\""));
  // The A100 has no GPM: no SM-activity line for it, rather than a 0.
  for (const auto& s : b.samples) {
    if (s.name == "DCGM_FI_PROF_SM_ACTIVE") {
      EXPECT_EQ(s.labels.at("gpu"), "0");
    }
  }
  EXPECT_EQ(bg.wait(), 0) << slurp(bg.err);
  EXPECT_THAT(slurp(bg.out), HasSubstr("served /metrics on 127.0.0.1:" + std::to_string(port)));
}

TEST(CliMonitor, PortZeroIsSaidAsSoonAsItIsBound) {
  // With --listen 0 the chosen port used to be printed only at the end, too late to scrape.
  Background bg = start({"--no-tui", "--duration", "2.5", "--listen", "0"});
  const std::string said = "gpuscope: serving /metrics on http://127.0.0.1:";
  std::string err;
  ASSERT_TRUE(wait_for(
      [&] {
        err = slurp(bg.err);
        return err.find("/metrics\n", err.find(said)) != std::string::npos;
      },
      2.0))
      << err;
  const int port = std::stoi(err.substr(err.find(said) + said.size()));
  std::string metrics;
  EXPECT_TRUE(wait_for([&] {
    metrics = scrape(port);
    return metrics.find("DCGM_FI_DEV_POWER_USAGE") != std::string::npos;
  }));
  EXPECT_EQ(bg.wait(), 0) << slurp(bg.err);
}

TEST(CliMonitor, ALostGpuIsMarkedAndTheOthersGoOn) {
  // two_gpus.json loses GPU 1 at t = 3 s.
  CliRun run = monitor("--no-tui --duration 4 --interval 100");
  EXPECT_EQ(run.exit_code, kExitGpuLost) << run.err;
  EXPECT_THAT(run.err, HasSubstr("GPU 1 stopped answering"));
  EXPECT_THAT(run.out, HasSubstr("LOST            stopped answering at 3."));
  EXPECT_THAT(run.out, Not(HasSubstr("GPU 0  NVIDIA H100 80GB HBM3  (GPU-00000000-1111-2222-3333-"
                                     "444444444444, 00000000:18:00.0)\n  LOST")));
}

// A lost GPU is a finding wherever the session was recorded: the store and the JSON lines both
// make `report` say so.
TEST(CliMonitor, ALostGpuIsAFindingInTheStoreAndTheReport) {
  const std::string db = fresh("lost.db"), jsonl = fresh("lost.jsonl");
  CliRun run = monitor("--no-tui --duration 4 --interval 100 --store " + db + " --jsonl " + jsonl);
  ASSERT_EQ(run.exit_code, kExitGpuLost) << run.err;

  const auto runs = testing::stored_runs(db);
  ASSERT_EQ(runs.size(), 1u);
  const store::RunData& loaded = runs[0];
  ASSERT_EQ(loaded.findings.size(), 1u);
  EXPECT_EQ(loaded.findings[0].id, "gpu_lost");
  EXPECT_EQ(loaded.findings[0].gpu, 1);
  EXPECT_EQ(loaded.findings[0].severity, store::Severity::error);

  for (const std::string& recording : {db, jsonl}) {
    CliRun report = shell("exec \"$GPUSCOPE\" report " + recording);
    ASSERT_EQ(report.exit_code, kExitOk) << report.err;
    EXPECT_THAT(report.out, HasSubstr("1 error,")) << recording;
    EXPECT_THAT(report.out, HasSubstr("GPU 1 stopped answering")) << recording;
  }
}

}  // namespace
}  // namespace gpuscope
