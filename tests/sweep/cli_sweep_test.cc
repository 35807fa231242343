// `gpuscope sweep` end to end on the simulated RTX 3090 of seeds/000: the real binary, the fake
// NVML with its state in a file (so the guardian's and the next start's restores are visible
// here), and gpuscope-sim-workload. Knees as the seed measured them; the prior limit restored
// at the end, on signals, on errors, by the guardian after a SIGKILL, and by the next command
// after both died; refusals that change nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <type_traits>

#include "gpuscope/exit_codes.h"
#include "gpuscope/store.h"
#include "support/cli_run.h"
#include "support/matchers.h"
#include "support/stored_runs.h"

namespace gpuscope {
namespace {

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::slurp;

constexpr const char* kUuid = "GPU-7c1e9a52-3b6d-4e8f-a0b1-c2d3e4f5a6b7";
constexpr unsigned kPriorMw = 390000;  // stock; the maximum is 480 W

std::string fixture_path(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURES) + "/nvml/" + name;
}

// One test's world: a scenario, the fake's state file, the journal folder.
class SweepCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir("cli_sweep_test") + "/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
           std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/state");
    scenario_ = fixture_path("rtx3090_power_sweep.json");
  }

  // Writes the fixture changed by `edit` as this test's scenario.
  void edit_scenario(const std::function<void(nlohmann::json&)>& edit) {
    auto json = nlohmann::json::parse(slurp(fixture_path("rtx3090_power_sweep.json")));
    edit(json);
    scenario_ = dir_ + "/scenario.json";
    std::ofstream(scenario_) << json.dump(2);
  }

  std::vector<std::string> env() const {
    std::vector<std::string> env = {std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH,
                                    "GPUSCOPE_FAKE_NVML_SCENARIO=" + scenario_,
                                    "GPUSCOPE_FAKE_NVML_STATE=" + state_file(),
                                    "GPUSCOPE_STATE_DIR=" + state_dir()};
    env.insert(env.end(), extra_env_.begin(), extra_env_.end());
    return env;
  }
  std::vector<std::string> extra_env_;
  std::string state_file() const { return dir_ + "/fake-nvml.state"; }
  std::string state_dir() const { return dir_ + "/state"; }
  std::string journal() const { return state_dir() + "/power-limit-" + kUuid + ".json"; }

 public:  // a Knob names the readers of the fake's state file
  // The power limit the fake's state file records as set on GPU `gpu`; nullopt: never set.
  std::optional<unsigned> limit_mw(unsigned gpu = 0) const {
    std::istringstream lines(slurp(state_file()));
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string key, name, limit;
      unsigned index = 0;
      f >> key >> index >> name >> limit;
      if (key == "gpu" && index == gpu && limit != "-") return std::stoul(limit);
    }
    return std::nullopt;
  }

  // The SM clock lock's maximum the fake's state file records on GPU `gpu`; nullopt: unlocked.
  std::optional<unsigned> lock_mhz(unsigned gpu = 0) const {
    std::istringstream lines(slurp(state_file()));
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string key, word;
      unsigned index = 0;
      f >> key >> index;
      if (key != "gpu" || index != gpu) continue;
      while (f >> word) {
        if (word != "locked_mhz") continue;
        std::string range;
        f >> range;
        if (range == "-") return std::nullopt;
        return std::stoul(range.substr(range.find(':') + 1));
      }
    }
    return std::nullopt;
  }

 protected:
  std::vector<std::string> sweep_args(const std::string& curve,
                                      std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {
        GPUSCOPE_BIN, "sweep", "--allow-power-changes", "--window", "0.2", "--warmup", "0.1"};
    args.insert(args.end(), extra.begin(), extra.end());
    for (const char* a : {"--", GPUSCOPE_SIM_WORKLOAD, "--curve"}) args.push_back(a);
    args.push_back(curve);
    args.push_back("--interval");
    args.push_back("0.02");
    return args;
  }

  // Starts `argv` with env() added, stdout/stderr to files named after `name`.
  pid_t spawn(const std::vector<std::string>& argv, const std::string& name) {
    const pid_t pid = testing::spawn_captured(argv, dir_ + "/" + name + ".out",
                                              dir_ + "/" + name + ".err", env());
    EXPECT_GT(pid, 0) << argv[0];
    return pid;
  }

  using Ended = testing::CliRun;
  Ended wait_for(pid_t pid, const std::string& name) {
    int status = 0;
    waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ + "/" + name + ".out"),
            slurp(dir_ + "/" + name + ".err")};
  }
  Ended run(const std::vector<std::string>& argv, const std::string& name) {
    return wait_for(spawn(argv, name), name);
  }

  // Polls until `done` holds, for up to `seconds`.
  static bool eventually(const std::function<bool()>& done, double seconds = 20) {
    return testing::eventually(done, seconds);
  }

  // Waits until the running sweep has lowered the limit below the prior.
  bool sweeping() {
    return eventually([&] { return limit_mw().value_or(kPriorMw) < kPriorMw; });
  }

  // --knob clocks: the same sweep against a lock of the SM clock (nvmlDeviceSetGpuLockedClocks),
  // undone with a reset in every case the power limit is restored in.
  std::string clock_journal() const { return state_dir() + "/locked-clocks-" + kUuid + ".json"; }

  std::vector<std::string> clock_args(const std::string& curve,
                                      std::vector<std::string> extra = {}) const {
    extra.insert(extra.begin(), {"--knob", "clocks"});
    return sweep_args(curve, extra);
  }

  // `gpuscope report DB` as Markdown; with the test failed where the report fails.
  std::string report_md(const std::string& db) {
    const std::string md = dir_ + "/report.md";
    const Ended report = run({GPUSCOPE_BIN, "report", db, "--format", "md", "-o", md}, "report");
    EXPECT_EQ(report.exit_code, kExitOk) << report.err;
    return slurp(md);
  }

  // Starts `argv`; once `changed` holds, kills it and the guardian `journal_path` names with
  // SIGKILL, so that nobody undoes the change.
  void kill_with_guardian(const std::vector<std::string>& argv, const std::string& journal_path,
                          const std::function<bool()>& changed) {
    const pid_t pid = spawn(argv, "both");
    ASSERT_TRUE(eventually(changed));
    const auto entry = nlohmann::json::parse(slurp(journal_path));
    kill(entry["guardian_pid"].get<int>(), SIGKILL);
    kill(pid, SIGKILL);
    wait_for(pid, "both");
  }

  std::string dir_, scenario_;
};

nlohmann::json knee_limits(const nlohmann::json& doc) {
  nlohmann::json knees = nlohmann::json::object();
  for (const auto& k : doc["workloads"][0]["knees"]) {
    knees[std::to_string(std::lround(k["fraction"].get<double>() * 100))] = k["limit_w"];
  }
  return knees;
}

TEST_F(SweepCli, FindsTheSeedsFp32TrainingKneesAndRestoresTheStockLimit) {
  const Ended r = run(sweep_args("fp32_train", {"--json", "-"}), "fp32");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["kind"], "gpuscope.sweep");
  EXPECT_EQ(doc["schema_version"], 1);
  const auto knees = knee_limits(doc);
  // seeds/000: fp32 training keeps 80/90/95 % of its 480 W speed at 280/330/380 W.
  EXPECT_NEAR(knees["80"].get<double>(), 280, 10) << doc["workloads"][0]["knees"];
  EXPECT_NEAR(knees["90"].get<double>(), 330, 10);
  EXPECT_NEAR(knees["95"].get<double>(), 380, 10);
  EXPECT_EQ(doc["plan_w"].front(), 480);
  EXPECT_EQ(doc["plan_w"].back(), 100);
  const auto& points = doc["workloads"][0]["points"];
  EXPECT_GE(points.size(), 17u);
  bool refined = false;
  for (const auto& p : points) {
    ASSERT_FALSE(p.contains("skipped")) << p;
    EXPECT_GE(p["window_samples_per_second"].size(), 2u);
    EXPECT_EQ(p["energy_source"], "counter");
    EXPECT_EQ(p["gpus"][0]["enforced_power_limit_w"], p["power_limit_w"]);
    // Every window has its own energy: the simulated card draws its whole limit.
    ASSERT_TRUE(p["power_avg_w"].is_number()) << p;
    EXPECT_NEAR(p["power_avg_w"].get<double>(), p["power_limit_w"].get<double>(),
                0.03 * p["power_limit_w"].get<double>())
        << p;
    refined = refined || p["refined"].get<bool>();
  }
  EXPECT_TRUE(refined);
  // J/sample = P / (310 f(P)) is least around 190-215 W on this curve.
  EXPECT_NEAR(doc["workloads"][0]["min_energy_limit_w"].get<double>(), 200, 20);
  EXPECT_THAT(r.err, HasSubstr("answer: 3"));
  EXPECT_THAT(r.err, HasSubstr("% speed"));
  EXPECT_EQ(limit_mw(), kPriorMw);  // the prior limit, not the 480 W maximum
  EXPECT_FALSE(std::filesystem::exists(journal()));
}

TEST_F(SweepCli, FindsTheSeedsHalfTrainingKneesAndRecordsTheRunInTheStore) {
  const std::string db = dir_ + "/results.db";
  const Ended r = run(sweep_args("half_train", {"--json", "-", "--store", db}), "half");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto knees = knee_limits(nlohmann::json::parse(r.out));
  // seeds/000: .half() training: 200/230/270 W.
  EXPECT_NEAR(knees["80"].get<double>(), 200, 10) << knees;
  EXPECT_NEAR(knees["90"].get<double>(), 230, 10);
  EXPECT_NEAR(knees["95"].get<double>(), 270, 10);
  EXPECT_EQ(limit_mw(), kPriorMw);

  const auto runs = testing::stored_runs(db);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs.front().run.kind, "sweep");
  const store::RunData& data = runs.front();
  int rates = 0;
  for (const auto& m : data.measurements) {
    if (m.name != store::names::kSamplesPerS) continue;
    ++rates;
    EXPECT_TRUE(m.tags.contains("power_limit_w"));
    EXPECT_EQ(m.tags["mode"], "gpuscope-sim-workload --curve half_train --interval 0.02");
  }
  EXPECT_GE(rates, 17);

  // The report's sweep section draws it.
  EXPECT_THAT(report_md(db), HasAllSubstrs({"Throughput vs power limit", "half_train"}));
}

// A workload that reports less often than --window (gpuscope-torch's window of slow steps): each
// measurement window lasts until its next line, and every point is measured.
TEST_F(SweepCli, AWorkloadReportingLessOftenThanTheWindowIsStillMeasured) {
  const Ended r = run({GPUSCOPE_BIN, "sweep", "--allow-power-changes", "--window", "0.2",
                       "--warmup", "0.1", "--limits", "480:200:140", "--no-refine", "--json", "-",
                       "--", GPUSCOPE_SIM_WORKLOAD, "--curve", "fp32_train", "--interval", "1.5"},
                      "slow");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& points = doc["workloads"][0]["points"];
  ASSERT_EQ(points.size(), 3u);  // 480 340 200
  for (const auto& p : points) {
    ASSERT_FALSE(p.contains("skipped")) << p;
    EXPECT_GE(p["seconds"].get<double>(), 1.4) << p;  // two windows, each up to a line
  }
  EXPECT_EQ(limit_mw(), kPriorMw);
}

TEST_F(SweepCli, ASecondSweepOnTheSameGpuIsRefused) {
  const pid_t first = spawn(sweep_args("fp32_train"), "first");
  ASSERT_TRUE(sweeping());
  const Ended second = run(sweep_args("half_train"), "second");
  EXPECT_EQ(second.exit_code, kExitError);
  EXPECT_THAT(second.err, HasSubstr("another sweep (pid " + std::to_string(first)));
  EXPECT_TRUE(std::filesystem::exists(journal()));  // the first one's, untouched
  kill(first, SIGINT);
  EXPECT_EQ(wait_for(first, "first").exit_code, kExitInterrupted);
  EXPECT_EQ(limit_mw(), kPriorMw);
}

TEST_F(SweepCli, NothingChangesWithoutAllowPowerChanges) {
  const Ended r = run({GPUSCOPE_BIN, "sweep", "--", GPUSCOPE_SIM_WORKLOAD, "--curve", "fp32_train"},
                      "notallowed");
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--allow-power-changes"));
  EXPECT_EQ(limit_mw(), std::nullopt);
}

TEST_F(SweepCli, TheDryRunPrintsThePlanAndMeasuresAtTheCurrentLimitOnly) {
  const Ended r =
      run({GPUSCOPE_BIN, "sweep", "--dry-run", "--window", "0.2", "--warmup", "0.1", "--json", "-",
           "--", GPUSCOPE_SIM_WORKLOAD, "--curve", "fp32_train", "--interval", "0.02"},
          "dry");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasAllSubstrs({"dry run: nothing is changed",
                                    "power limit 390 W now, settable 100-480 W",
                                    "plan (W): 480 456", "privilege to change limits"}));
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["workloads"][0]["points"].size(), 1u);
  const auto& point = doc["workloads"][0]["points"][0];
  EXPECT_EQ(point["power_limit_w"], 390);
  EXPECT_NEAR(point["samples_per_second"].get<double>(), 310 * 0.957, 0.5);
  EXPECT_EQ(limit_mw(), std::nullopt);  // no setter was ever called
  EXPECT_FALSE(std::filesystem::exists(journal()));
}

// How often `needle` occurs in `text`.
std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Bench rows as workloads: gpuscope-sim-workload stands in for gpuscope-torch (--torch-bin),
// running the curve of the row's mode and task.
std::vector<std::string> row_sweep_args(std::vector<std::string> rows) {
  std::vector<std::string> args = {GPUSCOPE_BIN, "sweep",       "--allow-power-changes",
                                   "--window",   "0.2",         "--warmup",
                                   "0.1",        "--torch-bin", GPUSCOPE_SIM_WORKLOAD};
  args.insert(args.end(), rows.begin(), rows.end());
  return args;
}

TEST_F(SweepCli, BenchRowsAreSweptInTurnEachByOneProcessWithItsOwnKnees) {
  const std::string db = dir_ + "/results.db";
  const Ended r = run(row_sweep_args({"--model", "vit_b16", "--task", "train", "--mode",
                                      "fp32,fp16", "--json", "-", "--store", db}),
                      "rows");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["workloads"].size(), 2u);
  const auto& fp32 = doc["workloads"][0];
  const auto& half = doc["workloads"][1];
  EXPECT_EQ(fp32["label"], "vit_b16 train fp32");
  EXPECT_EQ(half["tags"],
            (nlohmann::json{{"model", "vit_b16"}, {"task", "train"}, {"mode", "fp16"}}));
  EXPECT_EQ(fp32["throughput_unit"], "samples/s");
  EXPECT_THAT(fp32["command"].get<std::string>(), HasSubstr("--windows 0"));
  EXPECT_GE(fp32["points"].size(), 17u);
  EXPECT_GE(half["points"].size(), 17u);
  // Each its own knees: seeds/000's fp32 (280/330/380 W) and .half() (200/230/270 W) training.
  nlohmann::json only_fp32 = {{"workloads", {fp32}}}, only_half = {{"workloads", {half}}};
  EXPECT_NEAR(knee_limits(only_fp32)["90"].get<double>(), 330, 10) << fp32["knees"];
  EXPECT_NEAR(knee_limits(only_half)["90"].get<double>(), 230, 10) << half["knees"];
  // One process per workload for all its limits: two starts in all.
  EXPECT_EQ(count_of(r.err, "gpuscope-sim-workload: pid "), 2u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("vit_b16 train fp16 (samples/s)"));
  EXPECT_EQ(count_of(r.err, "answer: "), 2u);
  EXPECT_EQ(limit_mw(), kPriorMw);
  EXPECT_FALSE(std::filesystem::exists(journal()));

  // The store holds one curve per mode, and the report draws both on its chart.
  const auto runs = testing::stored_runs(db);
  ASSERT_FALSE(runs.empty());
  const store::RunData& data = runs.front();
  std::set<std::string> modes;
  for (const auto& m : data.measurements) {
    if (m.name != store::names::kSamplesPerS) continue;
    EXPECT_EQ(m.tags["model"], "vit_b16");
    EXPECT_EQ(m.tags["task"], "train");
    modes.insert(m.tags["mode"].get<std::string>());
  }
  EXPECT_EQ(modes, (std::set<std::string>{"fp32", "fp16"}));
  EXPECT_THAT(report_md(db), HasAllSubstrs({"fp32", "fp16"}));
}

TEST_F(SweepCli, TheSeedsPresetSweepsEveryModeTheGpuHasAndSkipsTheRest) {
  const Ended r = run(
      row_sweep_args({"--preset", "seeds", "--limits", "480:200:70", "--no-refine", "--json", "-"}),
      "seeds");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["workloads"].size(), 14u);  // ViT-B/16, train and infer, 7 modes
  int measured = 0, skipped = 0;
  for (const auto& w : doc["workloads"]) {
    EXPECT_TRUE(w["ended"].is_null()) << w;
    if (w["skipped"].is_string()) {
      ++skipped;
      EXPECT_THAT(w["skipped"].get<std::string>(), HasSubstr("no curve"));
      EXPECT_TRUE(w["points"].empty());
    } else {
      ++measured;
      EXPECT_EQ(w["points"].size(), 5u) << w["label"];  // 480 410 340 270 200
    }
  }
  // The simulated card has the seed's fp32 and .half() training curves only.
  EXPECT_EQ(measured, 2);
  EXPECT_EQ(skipped, 12);
  EXPECT_THAT(r.err, HasSubstr("skipped: this simulated GPU has no curve bf16_infer"));
  EXPECT_EQ(limit_mw(), kPriorMw);
}

TEST_F(SweepCli, TheDryRunMeasuresEachRowAtTheCurrentLimitOnly) {
  const Ended r = run({GPUSCOPE_BIN, "sweep", "--dry-run", "--window", "0.2", "--warmup", "0.1",
                       "--torch-bin", GPUSCOPE_SIM_WORKLOAD, "--model", "vit_b16", "--task",
                       "train", "--mode", "fp32,fp16", "--json", "-"},
                      "dryrows");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["workloads"].size(), 2u);
  for (const auto& w : doc["workloads"]) {
    ASSERT_EQ(w["points"].size(), 1u) << w;
    EXPECT_EQ(w["points"][0]["power_limit_w"], 390);
  }
  EXPECT_EQ(limit_mw(), std::nullopt);  // no setter was ever called
}

// What the lead runs on the H100 (bench/sweep_device.sh): the seeds preset's dry run, one point
// per workload at the current limit, with the sweep's own warm-up off.
TEST_F(SweepCli, TheDryRunOfTheSeedsPresetMeasuresEachModeOnceAndChangesNothing) {
  const Ended r =
      run({GPUSCOPE_BIN, "sweep", "--dry-run", "--gpu", "0", "--preset", "seeds", "--window", "0.2",
           "--warmup", "0", "--windows", "2", "--torch-bin", GPUSCOPE_SIM_WORKLOAD, "--json", "-"},
          "dryseeds");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["dry_run"], true);
  ASSERT_EQ(doc["workloads"].size(), 14u);
  int measured = 0;
  for (const auto& w : doc["workloads"]) {
    EXPECT_TRUE(w["ended"].is_null()) << w;
    if (w["skipped"].is_string()) continue;
    ++measured;
    ASSERT_EQ(w["points"].size(), 1u) << w;
    EXPECT_EQ(w["points"][0]["power_limit_w"], 390);
  }
  EXPECT_EQ(measured, 2);  // the simulated card's fp32 and .half() training curves
  EXPECT_THAT(r.err, HasSubstr("plan (W): 480 456"));
  EXPECT_EQ(limit_mw(), std::nullopt);
  EXPECT_FALSE(std::filesystem::exists(journal()));
}

// A row whose program cannot be started is reported as such, the next one is still tried, the
// limit is restored and the sweep ends with an error.
TEST_F(SweepCli, ARowThatCannotStartIsReportedAndTheSweepGoesOn) {
  const std::string broken = dir_ + "/broken-torch";
  std::ofstream(broken) << "\x7f not a program\n";
  std::filesystem::permissions(broken, std::filesystem::perms::owner_all);
  const Ended r = run({GPUSCOPE_BIN, "sweep", "--allow-power-changes", "--window", "0.2",
                       "--warmup", "0.1", "--torch-bin", broken, "--model", "vit_b16", "--task",
                       "train", "--mode", "fp32,fp16", "--json", "-"},
                      "broken");
  EXPECT_EQ(r.exit_code, kExitError) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["workloads"].size(), 2u);  // both tried
  for (const auto& w : doc["workloads"]) {
    EXPECT_TRUE(w["ended"].is_object()) << w;
    EXPECT_TRUE(w["points"].empty());
  }
  EXPECT_EQ(count_of(r.err, "the workload stopped early"), 2u) << r.err;
  EXPECT_EQ(limit_mw(), kPriorMw);
  EXPECT_FALSE(std::filesystem::exists(journal()));
}

TEST_F(SweepCli, RowsTakeBenchsChecksOneGpuAndNotACommandBesides) {
  // The row sweep's arguments, then the refused ones (split at spaces).
  const auto sweep_rows = [this](const std::string& rows) {
    std::istringstream words(rows);
    std::vector<std::string> args;
    for (std::string word; words >> word;) args.push_back(word);
    return run(row_sweep_args(args), "refused");
  };
  testing::expect_refused(
      sweep_rows, kExitUsage,
      {{"--model vit_b16 --mode int8", "int8"},
       {"--preset seeds --model vit_b16", "--preset is a whole matrix"},
       {"--model vit_b16 --gpu 0,1", "one --gpu"},
       {std::string("--model vit_b16 --windows 2 -- ") + GPUSCOPE_SIM_WORKLOAD + " --curve x",
        "not both"}});
  EXPECT_EQ(limit_mw(), std::nullopt);
}

// A command that cannot start is answered as a shell would (127 not found, 126 not runnable),
// before any limit changes.
TEST_F(SweepCli, ACommandThatCannotStartIsAnsweredAsAShellWould) {
  const auto sweep = [this](const std::string& command) {
    return run({GPUSCOPE_BIN, "sweep", "--allow-power-changes", "--", command}, "refused");
  };
  testing::expect_refused(sweep, kExitCommandNotFound,
                          {{"/no/such/program", "gpuscope: error: cannot run /no/such/program"}});
  testing::expect_refused(sweep, kExitCommandNotExecutable, {{dir_, "a directory"}});
  EXPECT_EQ(limit_mw(), std::nullopt);
}

// --burn: the burn worker's GEMM (gpuscope-sim-workload standing in for it, its curve
// PRECISION_gemm in TFLOP/s), its rate labelled and stored as FLOP/s, not samples.
TEST_F(SweepCli, ABurnGemmIsSweptInTflopsAndAPrecisionTheGpuLacksIsSkipped) {
  edit_scenario([](nlohmann::json& s) {
    auto& curves = s["devices"][0]["power_response"]["curves"];
    curves["fp16_gemm"] = curves["half_train"];
    curves["fp16_gemm"]["peak_samples_per_second"] = 71;  // TFLOP/s at 480 W
  });
  extra_env_ = {std::string("GPUSCOPE_BURN_WORKER=") + GPUSCOPE_SIM_WORKLOAD};
  const std::string db = dir_ + "/results.db";
  const Ended r = run({GPUSCOPE_BIN, "sweep", "--allow-power-changes", "--window", "0.2",
                       "--warmup", "0.1", "--burn", "fp16,int8", "--json", "-", "--store", db},
                      "burn");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["workloads"].size(), 2u);
  const auto& fp16 = doc["workloads"][0];
  EXPECT_EQ(fp16["label"], "fp16 GEMM");
  EXPECT_EQ(fp16["throughput_unit"], "TFLOP/s");
  EXPECT_THAT(fp16["command"].get<std::string>(), HasSubstr("--precision fp16"));
  ASSERT_GE(fp16["points"].size(), 17u);
  EXPECT_NEAR(fp16["points"][0]["samples_per_second"].get<double>(), 71, 0.5);  // at 480 W
  nlohmann::json only_fp16 = {{"workloads", {fp16}}};
  EXPECT_NEAR(knee_limits(only_fp16)["90"].get<double>(), 230, 10) << fp16["knees"];
  EXPECT_EQ(doc["workloads"][1]["throughput_unit"], "TOP/s");  // int8 counts operations
  EXPECT_TRUE(doc["workloads"][1]["skipped"].is_string());
  EXPECT_THAT(r.err, HasSubstr("fp16 GEMM (TFLOP/s)"));
  EXPECT_THAT(r.err, HasSubstr("J/TFLOP"));
  EXPECT_THAT(r.err, Not(HasSubstr("samples/s")));
  EXPECT_EQ(limit_mw(), kPriorMw);

  const auto runs = testing::stored_runs(db);
  ASSERT_FALSE(runs.empty());
  const store::RunData& data = runs.front();
  int rates = 0;
  for (const auto& m : data.measurements) {
    EXPECT_NE(m.name, store::names::kSamplesPerS);
    EXPECT_NE(m.name, store::names::kEnergyPerSample);
    if (m.name != store::names::kGemmFlopPerS || !m.value) continue;
    ++rates;
    EXPECT_EQ(m.tags["precision"], "fp16");
    EXPECT_GT(*m.value, 1e12);  // FLOP/s
  }
  EXPECT_GE(rates, 17);
}

using SweepClocks = SweepCli;

// A setting the sweep changes, and what each knob's sweep says and leaves as it undoes it.
struct Knob {
  std::string name;                // names the test cases
  std::vector<std::string> flags;  // what selects it on the command line
  std::string journal_prefix;      // its journal: PREFIX + the GPU's UUID + ".json"
  nlohmann::json journal_prior;    // what the journal records of the setting before the sweep
  // The setting the fake's state file records on GPU `gpu`, and what it was before the sweep.
  std::optional<unsigned> (SweepCli::*setting)(unsigned gpu) const;
  std::optional<unsigned> prior;
  std::string undone;                // printed when GPU 0's setting is undone
  std::string not_undone;            // printed when GPU 1's cannot be, the GPU lost
  std::string restored_to;           // what the next command says it restored GPU 0 to
  std::vector<std::string> setters;  // the NVML functions that need the privilege
  std::string refusal;               // the error without it
  std::function<void(nlohmann::json&)> unsettable;  // a scenario edit: the GPU cannot do it
  std::string unsettable_error;                     // the error then
};

void PrintTo(const Knob& knob, std::ostream* os) {
  *os << knob.name;
}

const Knob kPowerLimit = {"PowerLimit",
                          {},
                          "power-limit-",
                          {{"prior_power_limit_w", 390.0}},
                          &SweepCli::limit_mw,
                          kPriorMw,
                          "GPU 0: power limit restored to 390 W",
                          "GPU 1: could not restore",
                          "to 390 W",
                          {"nvmlDeviceSetPowerManagementLimit"},
                          "root or CAP_SYS_ADMIN",
                          [](nlohmann::json& s) {
                            s["devices"][0].erase("min_power_limit_mw");
                            s["devices"][0].erase("max_power_limit_mw");
                          },
                          "its power limit cannot be set"};

const Knob kClockLock = {
    "ClockLock",
    {"--knob", "clocks"},
    "locked-clocks-",
    {{"knob", "locked_clocks"}, {"prior_locked_clocks", "unlocked"}},
    &SweepCli::lock_mhz,
    std::nullopt,
    "GPU 0: SM clock lock reset",
    "GPU 1: could not restore its SM clocks",
    "to unlocked SM clocks",
    {"nvmlDeviceSetGpuLockedClocks", "nvmlDeviceResetGpuLockedClocks"},
    "locking a GPU's SM clock needs root or CAP_SYS_ADMIN",
    [](nlohmann::json& s) { s["devices"][0]["max_clocks"].erase("graphics_mhz"); },
    "its SM clock cannot be locked on this GPU or driver"};

// The tests every knob passes alike: its setting undone on signals, errors, a lost GPU, by the
// guardian and by the next command; refusals that change nothing. PARAM: a Knob, or a Knob and a
// signal.
template <typename Param>
class KnobSweep : public SweepCli, public ::testing::WithParamInterface<Param> {
 protected:
  const Knob& knob() const {
    if constexpr (std::is_same_v<Param, Knob>) {
      return this->GetParam();
    } else {
      return std::get<0>(this->GetParam());
    }
  }
  std::vector<std::string> knob_args() const { return sweep_args("fp32_train", knob().flags); }
  std::string knob_journal() const {
    return state_dir() + "/" + knob().journal_prefix + kUuid + ".json";
  }
  std::optional<unsigned> setting(unsigned gpu = 0) const { return (this->*knob().setting)(gpu); }
  // Whether the sweep has set the knob below what it was (an unlocked clock has no ceiling).
  bool lowered() const {
    const auto now = setting();
    return now.has_value() && *now < knob().prior.value_or(std::numeric_limits<unsigned>::max());
  }
};
using SweepKnob = KnobSweep<Knob>;
using SweepKnobSignal = KnobSweep<std::tuple<Knob, int>>;

TEST_P(SweepKnobSignal, UndoesTheSettingAndSaysItStopped) {
  const pid_t pid = spawn(knob_args(), "signal");
  ASSERT_TRUE(eventually([&] { return lowered(); }));
  ASSERT_TRUE(std::filesystem::exists(knob_journal()));
  kill(pid, std::get<1>(GetParam()));
  const Ended r = wait_for(pid, "signal");
  EXPECT_EQ(r.exit_code, kExitInterrupted) << r.err;
  EXPECT_THAT(r.out, HasSubstr(knob().undone));
  EXPECT_EQ(setting(), knob().prior);
  EXPECT_FALSE(std::filesystem::exists(knob_journal()));
}

TEST_P(SweepKnob, TheGuardianUndoesTheSettingWhenGpuscopeIsKilled) {
  const pid_t pid = spawn(knob_args(), "killed");
  ASSERT_TRUE(eventually([&] { return lowered(); }));
  const auto entry = nlohmann::json::parse(slurp(knob_journal()));
  for (const auto& prior : knob().journal_prior.items()) {
    EXPECT_EQ(entry[prior.key()], prior.value()) << prior.key();
  }
  ASSERT_GT(entry["guardian_pid"].get<int>(), 0);
  kill(pid, SIGKILL);
  wait_for(pid, "killed");
  EXPECT_TRUE(eventually([&] { return setting() == knob().prior; }, 10)) << setting().value_or(0);
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(knob_journal()); }, 10));
}

TEST_P(SweepKnob, TheNextCommandUndoesTheSettingWhenGpuscopeAndItsGuardianAreBothKilled) {
  ASSERT_NO_FATAL_FAILURE(
      kill_with_guardian(knob_args(), knob_journal(), [&] { return lowered(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(lowered());  // nobody undid it
  ASSERT_TRUE(std::filesystem::exists(knob_journal()));

  const Ended info = run({GPUSCOPE_BIN, "info"}, "info");
  EXPECT_EQ(info.exit_code, kExitOk) << info.err;
  EXPECT_THAT(info.err,
              HasAllSubstrs({"restored GPU 0 (NVIDIA GeForce RTX 3090", knob().restored_to}));
  EXPECT_EQ(setting(), knob().prior);
  EXPECT_FALSE(std::filesystem::exists(knob_journal()));
  const Ended again = run({GPUSCOPE_BIN, "sweep", "--restore"}, "restore");
  EXPECT_EQ(again.exit_code, kExitOk);
  EXPECT_THAT(again.out, HasSubstr("no power limit or clock lock to restore"));
}

TEST_P(SweepKnob, AnErrorMidSweepUndoesTheSetting) {
  // The workload ends after a second: the sweep cannot go on.
  auto args = knob_args();
  args.push_back("--seconds");
  args.push_back("1.5");
  const Ended r = run(args, "error");
  EXPECT_EQ(r.exit_code, kExitError) << r.err;
  EXPECT_THAT(r.out, HasSubstr("the workload ended (exit code 0) before the sweep did"));
  EXPECT_EQ(setting(), knob().prior);
  EXPECT_FALSE(std::filesystem::exists(knob_journal()));
}

TEST_P(SweepKnob, ThePermissionRefusalChangesNothingAndExits4) {
  edit_scenario([&](nlohmann::json& s) {
    s["errors"] = nlohmann::json::array();
    for (const std::string& setter : knob().setters) {
      s["errors"].push_back({{"function", setter}, {"return", "NVML_ERROR_NO_PERMISSION"}});
    }
  });
  const Ended r = run(knob_args(), "denied");
  EXPECT_EQ(r.exit_code, kExitPermission) << r.err;
  EXPECT_THAT(r.err, HasSubstr(knob().refusal));
  EXPECT_THAT(r.out, Not(HasSubstr("samples/s")));  // the workload never ran
  EXPECT_EQ(setting(), std::nullopt);
  EXPECT_FALSE(std::filesystem::exists(knob_journal()));
}

TEST_P(SweepKnob, WithoutCapSysAdminItSaysWhatIsNeededBeforeAnythingRuns) {
  std::vector<std::string> args = {"/usr/bin/setpriv", "--bounding-set", "-sys_admin"};
  if (!std::filesystem::exists(args[0])) GTEST_SKIP() << "no setpriv";
  for (const std::string& a : knob_args()) args.push_back(a);
  const Ended r = run(args, "nocap");
  EXPECT_EQ(r.exit_code, kExitPermission) << r.err;
  EXPECT_THAT(r.err, HasAllSubstrs({"needs root or CAP_SYS_ADMIN", knob().refusal}));
  EXPECT_EQ(setting(), std::nullopt);
}

TEST_P(SweepKnob, AGpuThatCannotDoItIsRefusedBeforeAnythingRuns) {
  edit_scenario(knob().unsettable);
  const Ended r = run(knob_args(), "fixed");
  EXPECT_EQ(r.exit_code, kExitError) << r.err;
  EXPECT_THAT(r.err, HasSubstr(knob().unsettable_error));
  EXPECT_EQ(setting(), std::nullopt);
  EXPECT_FALSE(std::filesystem::exists(knob_journal()));
}

TEST_P(SweepKnob, AGpuLostMidSweepStopsItAndTheOthersAreUndone) {
  edit_scenario([](nlohmann::json& s) {
    auto second = s["devices"][0];
    second["uuid"] = "GPU-00000000-3b6d-4e8f-a0b1-c2d3e4f5a6b8";
    second["pci_bus_id"] = "00000000:02:00.0";
    second["lost_at_t"] = 1.5;
    s["devices"].push_back(second);
  });
  const Ended r = run(knob_args(), "lost");
  EXPECT_EQ(r.exit_code, kExitGpuLost) << r.err;
  EXPECT_THAT(r.out, HasAllSubstrs({knob().undone, knob().not_undone}));
  EXPECT_EQ(setting(0), knob().prior);
  EXPECT_FALSE(std::filesystem::exists(knob_journal()));
}

INSTANTIATE_TEST_SUITE_P(Knobs, SweepKnob, ::testing::Values(kPowerLimit, kClockLock),
                         [](const auto& test) { return test.param.name; });
INSTANTIATE_TEST_SUITE_P(Knobs, SweepKnobSignal,
                         ::testing::Combine(::testing::Values(kPowerLimit, kClockLock),
                                            ::testing::Values(SIGINT, SIGTERM, SIGHUP)),
                         [](const auto& test) {
                           return std::get<0>(test.param).name +
                                  std::string(sigabbrev_np(std::get<1>(test.param)));
                         });

TEST_F(SweepClocks, FindsTheKneesInMhzAndResetsTheLock) {
  const std::string db = dir_ + "/results.db";
  const Ended r = run(clock_args("fp32_train", {"--json", "-", "--store", db}), "clocks");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["knob"], "locked_clocks");
  EXPECT_EQ(doc["unit"], "MHz");
  // From the highest lockable clock (2100 MHz) down in 5 % steps to 40 % of it.
  ASSERT_TRUE(doc["plan_mhz"].is_array()) << doc;
  EXPECT_EQ(doc["plan_mhz"].front(), 2100);
  EXPECT_EQ(doc["plan_mhz"][1], 1995);
  EXPECT_EQ(doc["plan_mhz"].back(), 840);
  EXPECT_FALSE(doc.contains("plan_w"));
  EXPECT_EQ(doc["gpus"][0]["prior_sm_clock_lock"], "unlocked");
  const auto& w = doc["workloads"][0];
  ASSERT_GE(w["points"].size(), 13u);
  bool refined = false;
  for (const auto& p : w["points"]) {
    ASSERT_FALSE(p.contains("skipped")) << p;
    ASSERT_TRUE(p.contains("sm_clock_lock_mhz")) << p;
    const double lock = p["sm_clock_lock_mhz"].get<double>();
    EXPECT_EQ(std::fmod(lock, 15.0), 0.0) << "a clock the GPU lists: " << lock;
    // The clock under load stays at the lock, or below it where the 390 W limit holds it.
    const double clock = p["gpus"][0]["sm_clock_avg_hz"].get<double>() / 1e6;
    EXPECT_NEAR(clock, std::min(lock, 1866.0), 1.0) << p;
    refined = refined || p["refined"].get<bool>();
  }
  EXPECT_TRUE(refined);
  // Below the 1866 MHz the 390 W limit allows, the speed follows the lock: 80/90/95 % of the
  // fastest point (95.7 % of the peak at 1950 MHz) at 1493/1680/1773 MHz.
  std::map<long, double> knees;
  for (const auto& k : w["knees"]) {
    knees[std::lround(k["fraction"].get<double>() * 100)] = k["sm_clock_lock_mhz"].get<double>();
  }
  EXPECT_NEAR(knees[80], 1493, 15) << w["knees"];
  EXPECT_NEAR(knees[90], 1680, 15);
  EXPECT_NEAR(knees[95], 1773, 15);
  EXPECT_TRUE(w["recommendation"]["sm_clock_lock_mhz"].is_number()) << w["recommendation"];
  EXPECT_THAT(r.err, HasAllSubstrs({"plan (MHz): 2100 1995", "answer: 1680 MHz: \u221210 % speed",
                                    "% of the speed from 1"}));
  EXPECT_THAT(r.out + r.err, HasSubstr("GPU 0: SM clock lock reset"));
  EXPECT_EQ(lock_mhz(), std::nullopt);
  EXPECT_EQ(limit_mw(), std::nullopt);  // the power limit is never touched
  EXPECT_FALSE(std::filesystem::exists(clock_journal()));

  const auto runs = testing::stored_runs(db);
  ASSERT_FALSE(runs.empty());
  const store::RunData& data = runs.front();
  int rates = 0;
  for (const auto& m : data.measurements) {
    if (m.name != store::names::kSamplesPerS) continue;
    ++rates;
    EXPECT_TRUE(m.tags.contains("sm_clock_lock_mhz")) << m.tags;
    EXPECT_FALSE(m.tags.contains("power_limit_w"));
  }
  EXPECT_GE(rates, 13);
  EXPECT_THAT(report_md(db), HasSubstr("Throughput vs SM clock lock"));
}

TEST_F(SweepClocks, SweepRestoreResetsALeftoverLock) {
  ASSERT_NO_FATAL_FAILURE(kill_with_guardian(clock_args("fp32_train"), clock_journal(),
                                             [&] { return lock_mhz().has_value(); }));
  const Ended restore = run({GPUSCOPE_BIN, "sweep", "--restore"}, "restore");
  EXPECT_EQ(restore.exit_code, kExitOk) << restore.err;
  EXPECT_THAT(restore.out, HasSubstr("to unlocked SM clocks, its clock setting (a reset)"));
  EXPECT_EQ(lock_mhz(), std::nullopt);
  EXPECT_FALSE(std::filesystem::exists(clock_journal()));
}

TEST_F(SweepClocks, TheDryRunPrintsThePlanInMhzAndLocksNothing) {
  const Ended r = run(
      {GPUSCOPE_BIN, "sweep", "--knob", "clocks", "--dry-run", "--window", "0.2", "--warmup", "0.1",
       "--json", "-", "--", GPUSCOPE_SIM_WORKLOAD, "--curve", "fp32_train", "--interval", "0.02"},
      "dry");
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasAllSubstrs({"dry run: nothing is changed", "SM clock lockable 210-2100 MHz",
                                    "plan (MHz): 2100 1995",
                                    "the dry run measures the clocks as they are"}));
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["workloads"][0]["points"].size(), 1u);
  const auto& point = doc["workloads"][0]["points"][0];
  EXPECT_EQ(point["sm_clock_lock_mhz"], 2100);  // unlocked: the highest clock is the ceiling
  EXPECT_NEAR(point["samples_per_second"].get<double>(), 310 * 0.957, 0.5);
  EXPECT_EQ(lock_mhz(), std::nullopt);
  EXPECT_FALSE(std::filesystem::exists(clock_journal()));
}

TEST_F(SweepClocks, AnUnknownKnobIsAUsageError) {
  const Ended r = run({GPUSCOPE_BIN, "sweep", "--knob", "voltage", "--dry-run", "--",
                       GPUSCOPE_SIM_WORKLOAD, "--curve", "fp32_train"},
                      "knob");
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--knob"));
}

}  // namespace
}  // namespace gpuscope
