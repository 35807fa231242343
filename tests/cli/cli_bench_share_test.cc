// `gpuscope bench --share` end to end: the real binary, NVML replaced by the fake library,
// gpuscope-torch by the scripted fake (GPUSCOPE_FAKE_TORCH_SHARED: N copies time-sliced run at
// 1/N each, under MPS at 1.85/N) and nvidia-cuda-mps-control by a fake that records its start
// and quit. Copies start together, an OOM is data, the private MPS daemon is stopped at the end,
// on Ctrl-C and (by its guardian) after a SIGKILL of gpuscope, leftovers go at the next start, a
// system daemon is refused or used, MIG instances get one copy each, a person's command shares.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "gpuscope/exit_codes.h"
#include "support/cli_run.h"
#include "support/matchers.h"
#include "support/scratch_dir.h"

extern char** environ;

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::slurp;

const char* kRow = "--model resnet50 --task train --mode amp_bf16 --windows 6";

// One test's folder: short (it is TMPDIR, where the run folder and its MPS sockets go), with the
// fake MPS's log, the fake torch's environment log and the state folder (journals).
class ShareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ + "/tmp");
    fs::create_directories(dir_ + "/system");
    env_ = {std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH,
            std::string("GPUSCOPE_FAKE_NVML_SCENARIO=") + GPUSCOPE_BENCH_TEST_DATA +
                "/h100_constant_300w.json",
            std::string("GPUSCOPE_TORCH_BIN=") + GPUSCOPE_FAKE_TORCH,
            std::string("GPUSCOPE_MPS_CONTROL=") + GPUSCOPE_FAKE_MPS_CONTROL,
            "GPUSCOPE_MPS_SYSTEM_PIPE_DIR=" + dir_ + "/system",
            "GPUSCOPE_FAKE_MPS_LOG=" + dir_ + "/mps.log",
            "GPUSCOPE_FAKE_TORCH_ENV_LOG=" + dir_ + "/env.log", "GPUSCOPE_FAKE_TORCH_SHARED=1",
            // Not named nvidia-cuda-mps-*: CTest runs these tests in parallel, and a fake server
            // of one must not look like a system daemon to another.
            "GPUSCOPE_FAKE_MPS_SERVER_NAME=fake-mps-server-cli",
            "GPUSCOPE_STATE_DIR=" + dir_ + "/state", "TMPDIR=" + dir_ + "/tmp"};
  }

  std::string command(const std::string& args, const std::vector<std::string>& more) const {
    std::string vars;
    for (const auto& e : env_) vars += " '" + e + "'";
    for (const auto& e : more) vars += " '" + e + "'";
    return "env" + vars + " " + GPUSCOPE_BIN + " bench " + args;
  }
  testing::CliRun bench(const std::string& args, const std::vector<std::string>& more = {}) {
    return testing::run_in(dir_, command(args, more));
  }
  // Starts gpuscope in the background (through sh, so `exec` leaves gpuscope's own pid).
  pid_t spawn(const std::string& args, const std::vector<std::string>& more) {
    const std::string line =
        "exec " + command(args, more) + " >" + dir_ + "/bg.out 2>" + dir_ + "/bg.err </dev/null";
    char* argv[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"),
                    const_cast<char*>(line.c_str()), nullptr};
    pid_t pid = -1;
    posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ);
    return pid;
  }
  int wait_exit(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  static bool eventually(const std::function<bool()>& done, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }
  std::string mps_log() const { return slurp(dir_ + "/mps.log"); }
  // Run folders left in TMPDIR.
  int run_folders() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_ + "/tmp")) {
      n += e.path().filename().string().starts_with("gpuscope-share-");
    }
    return n;
  }
  // Processes (copies) whose environment names this test's run folders.
  int copies_left() const {
    int n = 0;
    const std::string mark = "GPUSCOPE_SHARE_GO_FILE=" + dir_ + "/tmp/gpuscope-share-";
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string environ_text = slurp(e.path().string() + "/environ");
      n += environ_text.find(mark) != std::string::npos;
    }
    return n;
  }
  bool journals_left() const {
    std::error_code ignored;
    for (const auto& e : fs::directory_iterator(dir_ + "/state", ignored)) {
      if (e.path().filename().string().starts_with("mps-")) return true;
    }
    return false;
  }
  // The fake torch's environment lines.
  std::vector<std::map<std::string, std::string>> env_lines() const {
    std::vector<std::map<std::string, std::string>> lines;
    std::istringstream in(slurp(dir_ + "/env.log"));
    std::string line;
    while (std::getline(in, line)) {
      std::map<std::string, std::string> fields;
      std::istringstream words(line);
      std::string word;
      while (words >> word) {
        const auto eq = word.find('=');
        fields[word.substr(0, eq)] = word.substr(eq + 1);
      }
      lines.push_back(fields);
    }
    return lines;
  }

  testing::ScratchDir scratch_{"/tmp/gst-cli-"};  // short: it is TMPDIR, with MPS sockets
  const std::string dir_ = scratch_.path().string();
  std::vector<std::string> env_;
};

const nlohmann::json* find_trial(const nlohmann::json& doc, const std::string& mode, int copies) {
  for (const auto& t : doc["shares"][0]["trials"]) {
    if (t["mode"] == mode && t["copies"] == copies) return &t;
  }
  return nullptr;
}

TEST_F(ShareCli, TimeSlicedAndMpsCopiesWithTheAnswer) {
  const auto run = bench(std::string(kRow) + " --share 1,2 --json -");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["kind"], "gpuscope.bench.share");
  EXPECT_EQ(doc["schema_version"], 1);
  ASSERT_EQ(doc["shares"][0]["trials"].size(), 4u);
  const auto* ts2 = find_trial(doc, "timeslice", 2);
  const auto* mps2 = find_trial(doc, "mps", 2);
  ASSERT_TRUE(ts2 && mps2);
  EXPECT_EQ((*ts2)["runs"].size(), 2u);
  EXPECT_TRUE((*ts2)["overlapped"].get<bool>());
  EXPECT_NEAR((*ts2)["gain"].get<double>(), 1.0, 0.15);
  EXPECT_NEAR((*mps2)["gain"].get<double>(), 1.85, 0.25);
  EXPECT_NEAR((*mps2)["fairness"].get<double>(), 1.0, 0.15);
  EXPECT_GT((*mps2)["energy_per_sample_j"].get<double>(), 0);
  EXPECT_TRUE((*mps2)["fits"].get<bool>());
  EXPECT_THAT(doc["shares"][0]["answer"].get<std::string>(),
              HasSubstr("Up to 2 copies pay off (MPS"));
  EXPECT_THAT(doc["shares"][0]["answer"].get<std::string>(), HasSubstr("over time slicing here"));
  // The MPS copies, and only they, ran with the private daemon's folders.
  int under_mps = 0;
  for (const auto& line : env_lines()) {
    if (!line.at("mps_pipe").empty()) {
      ++under_mps;
      EXPECT_THAT(line.at("mps_pipe"), HasSubstr(dir_ + "/tmp/gpuscope-share-"));
      EXPECT_THAT(line.at("mps_pipe"), HasSubstr("/mps-pipe"));
    }
  }
  EXPECT_EQ(under_mps, 3);  // 1 + 2
  // Started once, stopped once, nothing left.
  const std::string log = mps_log();
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 2) << log;
  EXPECT_TRUE(log.starts_with("start ")) << log;
  // The private daemon serves only the GPU shared (its UUID), never the machine's others.
  EXPECT_THAT(log, HasSubstr("visible=GPU-00000000-bench-0000-0000-000000000300\n"));
  EXPECT_THAT(log, HasSubstr("\nquit "));
  EXPECT_EQ(run_folders(), 0);
  EXPECT_FALSE(journals_left());
}

TEST_F(ShareCli, TheConsoleTableAndTheThreadPercentage) {
  const auto run =
      bench(std::string(kRow) + " --share 2 --share-mode mps --mps-thread-percentage 50");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out,
              HasAllSubstrs({"Sharing GPU 0 (NVIDIA H100 80GB HBM3): resnet50 train amp_bf16",
                             "MPS daemon: private (pipe folder ", ", active threads 50 %",
                             "mps             2", "Answer: "}));
  for (const auto& line : env_lines()) EXPECT_EQ(line.at("mps_threads"), "50");
}

TEST_F(ShareCli, TheStoreGetsEveryTrialAndCopy) {
  const std::string db = dir_ + "/results.db";
  const auto run = bench(std::string(kRow) + " --share 1,2 --share-mode mps --store " + db);
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.err, HasSubstr("gpuscope: bench run 1 written to " + db));
  // The report's sharing section has them, the bench section does not take them for modes.
  const auto report = testing::run_gpuscope(
      dir_, std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH, "report " + db);
  ASSERT_EQ(report.exit_code, kExitOk) << report.err;
  EXPECT_THAT(report.out, HasAllSubstrs({"== Sharing one GPU (bench --share) ==", "Copies together",
                                         "resnet50 train amp_bf16  mps"}));
  EXPECT_THAT(report.out, Not(HasSubstr("Training and inference modes")));
  EXPECT_THAT(report.out, Not(HasSubstr("share_gain")));  // not an "other measurement"
}

TEST_F(ShareCli, CopiesGoTogetherBehindTheBarrier) {
  // Copy i takes i x 0.4 s to get ready; none may start timing before the last is ready.
  const auto run = bench(std::string(kRow) + " --share 3 --share-mode timeslice",
                         {"GPUSCOPE_FAKE_TORCH_STAGGER=0.4"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const auto lines = env_lines();
  ASSERT_EQ(lines.size(), 3u);
  long long last_ready = 0, first_go = LLONG_MAX;
  for (const auto& line : lines) {
    last_ready = std::max(last_ready, std::stoll(line.at("started_ns")));
    first_go = std::min(first_go, std::stoll(line.at("go_ns")));
  }
  EXPECT_LE(last_ready, first_go);
}

TEST_F(ShareCli, CopiesThatDoNotFitAreData) {
  const auto run = bench(std::string(kRow) + " --share 1,2,4 --share-mode timeslice --json -",
                         {"GPUSCOPE_FAKE_TORCH_FITS=2"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  const auto* four = find_trial(doc, "timeslice", 4);
  ASSERT_TRUE(four);
  EXPECT_FALSE((*four)["fits"].get<bool>());
  EXPECT_EQ((*four)["out_of_memory"], 2);
  EXPECT_EQ((*four)["runs"][3]["skip_code"], "out_of_memory");
  EXPECT_TRUE((*find_trial(doc, "timeslice", 2))["fits"].get<bool>());
  EXPECT_THAT(doc["shares"][0]["answer"].get<std::string>(),
              HasSubstr("4 copies do not fit in memory under time slicing (2 ran out)"));
}

TEST_F(ShareCli, GuardianStopsTheDaemonAndTheCopiesWhenGpuscopeIsKilled) {
  const pid_t pid = spawn(std::string(kRow) + " --share 2 --share-mode mps",
                          {"GPUSCOPE_FAKE_TORCH_TIME_SCALE=100"});
  ASSERT_TRUE(eventually([&] { return env_lines().size() == 2; }, 20)) << slurp(dir_ + "/bg.err");
  ASSERT_TRUE(journals_left());
  ::kill(pid, SIGKILL);
  wait_exit(pid);
  EXPECT_TRUE(eventually([&] { return mps_log().find("quit ") != std::string::npos; }, 20))
      << mps_log();
  EXPECT_TRUE(eventually([&] { return run_folders() == 0 && !journals_left(); }, 10));
  // The copies were ended too (else the daemon could not quit): nothing runs our fake now.
  EXPECT_NE(std::system(("grep -l 'GPUSCOPE_SHARE_GO_FILE=" + dir_ +
                         "' /proc/[0-9]*/environ >/dev/null 2>&1")
                            .c_str()),
            0);
}

// SIGINT (Ctrl-C) or SIGTERM (a scheduler's stop) in the middle of the MPS ×2 trial.
class ShareCliStopped : public ShareCli, public ::testing::WithParamInterface<int> {};

TEST_P(ShareCliStopped, StopsTheDaemonAndKeepsTheTrialsSoFar) {
  const pid_t pid = spawn(std::string(kRow) + " --share 1,2 --share-mode mps",
                          {"GPUSCOPE_FAKE_TORCH_TIME_SCALE=20"});
  ASSERT_TRUE(eventually([&] { return env_lines().size() == 3; }, 30)) << slurp(dir_ + "/bg.err");
  ::kill(pid, GetParam());
  EXPECT_EQ(wait_exit(pid), kExitInterrupted) << slurp(dir_ + "/bg.err");
  EXPECT_THAT(mps_log(), HasSubstr("quit "));
  EXPECT_EQ(run_folders(), 0);
  EXPECT_FALSE(journals_left());
  EXPECT_EQ(copies_left(), 0) << "a copy outlived gpuscope";
  EXPECT_THAT(slurp(dir_ + "/bg.out"), HasSubstr("mps             1"));
}

std::string signal_name(const ::testing::TestParamInfo<int>& param) {
  return param.param == SIGINT ? "SIGINT" : "SIGTERM";
}

INSTANTIATE_TEST_SUITE_P(Signals, ShareCliStopped, ::testing::Values(SIGINT, SIGTERM), signal_name);

TEST_F(ShareCli, TheNextShareStopsWhatAKilledGpuscopeAndItsGuardianLeft) {
  // A daemon and journal as a gpuscope killed with its guardian leaves them.
  const std::string run_dir = dir_ + "/tmp/gpuscope-share-left";
  const std::string start = "CUDA_MPS_PIPE_DIRECTORY=" + run_dir +
                            "/mps-pipe CUDA_MPS_LOG_DIRECTORY=" + run_dir +
                            "/mps-log GPUSCOPE_FAKE_MPS_LOG=" + dir_ +
                            "/mps.log GPUSCOPE_FAKE_MPS_SERVER_NAME=fake-mps-server-cli " +
                            GPUSCOPE_FAKE_MPS_CONTROL + " -d";
  ASSERT_EQ(std::system(start.c_str()), 0);
  fs::create_directories(dir_ + "/state");
  const nlohmann::json journal = {{"kind", "gpuscope.bench.mps_journal"},
                                  {"version", 1},
                                  {"pid", 999999999},
                                  {"control_program", GPUSCOPE_FAKE_MPS_CONTROL},
                                  {"pipe_dir", run_dir + "/mps-pipe"},
                                  {"log_dir", run_dir + "/mps-log"},
                                  {"run_dir", run_dir}};
  std::ofstream(dir_ + "/state/mps-999999999.json") << journal.dump();
  const auto run = bench(std::string(kRow) + " --share 1 --share-mode timeslice");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.err,
              HasSubstr("stopped the private MPS daemon left by gpuscope process 999999999"));
  EXPECT_THAT(mps_log(), HasSubstr("quit " + run_dir + "/mps-pipe"));
  EXPECT_EQ(run_folders(), 0);
  EXPECT_FALSE(journals_left());
}

TEST_F(ShareCli, ASystemDaemonIsRefusedOrUsed) {
  std::ofstream(dir_ + "/system/control").put('\n');
  auto refused = bench(std::string(kRow) + " --share 2 --share-mode mps");
  EXPECT_EQ(refused.exit_code, kExitUsage) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("an MPS daemon is already running (control socket " + dir_ +
                                     "/system/control)"));
  EXPECT_EQ(mps_log(), "");
  EXPECT_TRUE(env_lines().empty());  // refused before any copy ran
  auto used = bench(std::string(kRow) + " --share 2 --share-mode mps --mps-daemon system");
  ASSERT_EQ(used.exit_code, kExitOk) << used.err;
  EXPECT_THAT(used.out, HasSubstr("MPS daemon: system (control socket"));
  EXPECT_EQ(mps_log(), "");  // neither started nor stopped
}

TEST_F(ShareCli, ExclusiveProcessComputeModeIsReportedNotChanged) {
  auto scenario = nlohmann::json::parse(
      slurp(std::string(GPUSCOPE_BENCH_TEST_DATA) + "/h100_constant_300w.json"));
  scenario["devices"][0]["compute_mode"] = "exclusive_process";
  const std::string path = dir_ + "/exclusive.json";
  std::ofstream(path) << scenario.dump();
  const auto run =
      bench(std::string(kRow) + " --share 1,2 --json -", {"GPUSCOPE_FAKE_NVML_SCENARIO=" + path});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.err, HasSubstr("exclusive-process compute mode (left as it is)"));
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["shares"][0]["compute_mode"], "exclusive_process");
  EXPECT_THAT((*find_trial(doc, "timeslice", 2))["skip_reason"].get<std::string>(),
              HasSubstr("one process at a time"));
  EXPECT_FALSE((*find_trial(doc, "mps", 2))["total_samples_per_second"].is_null());
}

TEST_F(ShareCli, OneCopyPerMigInstance) {
  const auto run = bench(std::string(kRow) + " --share 1 --json -",
                         {std::string("GPUSCOPE_FAKE_NVML_SCENARIO=") + GPUSCOPE_TEST_FIXTURES +
                          "/nvml/a100_mig.json"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_EQ(doc["shares"][0]["trials"].size(), 1u);
  const auto& mig = doc["shares"][0]["trials"][0];
  EXPECT_EQ(mig["mode"], "mig");
  ASSERT_EQ(mig["runs"].size(), 3u);
  EXPECT_THAT(mig["runs"][0]["target"].get<std::string>(), HasSubstr("MIG 3g.20gb"));
  std::set<std::string> visible;
  for (const auto& line : env_lines()) {
    EXPECT_TRUE(line.at("visible").starts_with("MIG-")) << line.at("visible");
    EXPECT_TRUE(line.at("mps_pipe").empty());
    visible.insert(line.at("visible"));
  }
  EXPECT_EQ(visible.size(), 3u);
  EXPECT_THAT(doc["shares"][0]["answer"].get<std::string>(),
              HasSubstr("One copy per MIG instance: 3 instances together"));
  EXPECT_EQ(mps_log(), "");
  // Time slicing asked for on a GPU in MIG mode: said, not tried.
  const auto ts = bench(std::string(kRow) + " --share 2 --share-mode timeslice",
                        {std::string("GPUSCOPE_FAKE_NVML_SCENARIO=") + GPUSCOPE_TEST_FIXTURES +
                         "/nvml/a100_mig.json"});
  EXPECT_THAT(ts.out, HasSubstr("skipped: GPU 0 is in MIG mode"));
}

TEST_F(ShareCli, APersonsCommandShares) {
  const auto run = bench(
      "--share 2 --share-mode timeslice --json - -- /bin/sh -c 'for i in 1 2 3 4 5 6 7 8; do "
      "echo \"{\\\"samples_per_second\\\": 100}\"; sleep 0.1; done'");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  const auto* two = find_trial(doc, "timeslice", 2);
  ASSERT_TRUE(two);
  EXPECT_NEAR((*two)["total_samples_per_second"].get<double>(), 200, 30);
  EXPECT_THAT(doc["shares"][0]["workload"].get<std::string>(), HasSubstr("/bin/sh -c"));
}

TEST_F(ShareCli, ACommandThatCannotStartIsAnsweredAsAShellWould) {
  auto run = bench("--share 2 --share-mode timeslice -- " + dir_ + "/no-such-program");
  EXPECT_EQ(run.exit_code, kExitCommandNotFound) << run.err;
  EXPECT_THAT(run.err, HasSubstr("no such file"));
  const std::string plain = dir_ + "/not-executable";
  std::ofstream(plain) << "data\n";
  run = bench("--share 2 --share-mode timeslice -- " + plain);
  EXPECT_EQ(run.exit_code, kExitCommandNotExecutable) << run.err;
  EXPECT_EQ(run_folders(), 0);
}

TEST_F(ShareCli, BadOptionsAreRefused) {
  auto run = bench(std::string(kRow) + " --share 0");
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("copy counts 1..64"));
  run = bench(std::string(kRow) + " --share 2 --share-mode vgpu");
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("unknown mode 'vgpu'"));
  run = bench("--share 2");
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("nothing to run"));
}

}  // namespace
}  // namespace gpuscope
