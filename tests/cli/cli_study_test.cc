// `gpuscope study` end to end: the real binary, NVML replaced by the fake library, and the steps
// run by a scripted stand-in for the gpuscope executable (GPUSCOPE_STUDY_SELF) that passes
// `info` to the real binary and plays burn and bench from recordings, or fails, crashes or is
// interrupted on request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuscope/exit_codes.h"
#include "support/cli_run.h"
#include "support/matchers.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using gpuscope::testing::HasAllSubstrs;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::CliRun;

std::string slurp(const fs::path& path) {
  return testing::slurp(path.string());
}

const char kFakeSelf[] = R"(#!/bin/bash
# A stand-in for gpuscope as `gpuscope study` runs it for each step.
echo "$1" >> "$FAKE_STUDY_CALLS"
echo "$*" >> "$FAKE_STUDY_CALLS.args"
case "$1" in
  info) exec "$REAL_GPUSCOPE" "$@" ;;
  burn)
    case "${FAKE_BURN:-ok}" in
      ok) cat "$FIXTURES/burn/h100_burn_recorded_2026-11-22.json"; exit 0 ;;
      crash) echo "burn: something went badly wrong" >&2; kill -SEGV $$ ;;
    esac ;;
  bench)
    while [ $# -gt 0 ]; do
      case "$1" in
        --json) out="$2"; shift ;; --store) store="$2"; shift ;; --resume) resume="$2"; shift ;;
      esac
      shift
    done
    # What a resumed bench was given to go on from.
    [ -n "$resume" ] && cp "$resume" "$FAKE_STUDY_CALLS.resumed"
    [ -n "$resume" ] && FAKE_BENCH=ok
    case "${FAKE_BENCH:-ok}" in
      killed)  # the machine kills the whole study mid-matrix: the rows so far are on disk
        cp "$FAKE_PARTIAL" "$out"; kill -KILL $PPID; exit 0 ;;
      ok)
        cp "$SAMPLE/steps/bench-gpu0.db" "$store"
        cp "$SAMPLE/steps/bench-gpu0.json" "$out"
        echo "bench: done" >&2
        exit 0 ;;
      missing) echo "gpuscope: error: gpuscope-torch was not found next to gpuscope" >&2; exit 2 ;;
      interrupt) trap 'echo "bench: stopping" >&2; exit 130' INT; kill -INT $PPID; sleep 10 & wait; exit 0 ;;
    esac ;;
  sweep)  # the real sweep, on the simulated card, in short windows; rows by the simulator
    args=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --window) args+=(--window 0.2); shift ;;
        --warmup) args+=(--warmup 0.1); shift ;;
        *) args+=("$1") ;;
      esac
      shift
    done
    exec "$REAL_GPUSCOPE" "${args[@]}" --torch-bin "$SIM_WORKLOAD" --limits 480:200:70 --no-refine ;;
esac
echo "fake gpuscope: unexpected $*" >&2
exit 99
)";

class CliStudy : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = testing::test_scratch_dir("cli_study");
    fake_ = base_ / "fake-gpuscope";
    std::ofstream(fake_) << kFakeSelf;
    fs::permissions(fake_, fs::perms::owner_all);
    calls_ = base_ / "calls.txt";
    dir_ = base_ / "study";
  }

  // Runs gpuscope with `args`; `env` adds KEY=VALUE pairs (or `-u NAME`).
  CliRun gpuscope(const std::string& args, const std::string& env = "",
                  const std::string& scenario = "h100_sxm.json") {
    std::string fixtures = GPUSCOPE_TEST_FIXTURES;
    std::string command =
        "env CUDA_VISIBLE_DEVICES= GPUSCOPE_NVML_LIBRARY=" + std::string(GPUSCOPE_FAKE_NVML_PATH) +
        " GPUSCOPE_FAKE_NVML_SCENARIO=" +
        (scenario.front() == '/' ? scenario : fixtures + "/nvml/" + scenario) +
        " GPUSCOPE_STUDY_SELF=" + fake_.string() + " REAL_GPUSCOPE=" + GPUSCOPE_BIN +
        " FAKE_STUDY_CALLS=" + calls_.string() + " FIXTURES=" + fixtures +
        " SAMPLE=" + GPUSCOPE_SAMPLE_SOURCE_DIR + " " + env + " " + GPUSCOPE_BIN + " " + args;
    return testing::run_in(base_.string(), command);
  }

  json state() { return json::parse(slurp(dir_ / "study.json")); }
  std::string status_of(const std::string& step) {
    return state()["steps"][step]["status"].get<std::string>();
  }
  int calls_of(const std::string& command) {
    std::ifstream in(calls_);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line == command;
    return n;
  }
  std::string study_args() { return "study --quick -o " + dir_.string(); }

  fs::path base_, fake_, calls_, dir_;
};

TEST_F(CliStudy, NoDriverSaysWhatIsMissingAndPointsAtTheSample) {
  CliRun run = gpuscope(study_args(), "GPUSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(run.exit_code, kExitNoGpu) << run.err;
  EXPECT_THAT(run.err, HasAllSubstrs({"no NVIDIA GPU to study", "libnvidia-ml.so.1",
                                      "gpuscope study --sample"}));
  EXPECT_EQ(run.out, "");
  EXPECT_FALSE(fs::exists(dir_));  // nothing written
}

TEST_F(CliStudy, DriverWithoutGpuEndsTheSameWay) {
  CliRun run = gpuscope(study_args(), "", "no_gpu.json");
  EXPECT_EQ(run.exit_code, kExitNoGpu) << run.err;
  EXPECT_THAT(run.err, HasSubstr("gpuscope study --sample"));
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(CliStudy, NoGpuAsJson) {
  CliRun run = gpuscope(study_args() + " --json", "", "no_driver.json");
  EXPECT_EQ(run.exit_code, kExitNoGpu) << run.err;
  json j = json::parse(run.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["status"], "no_gpu");
  EXPECT_EQ(j["hint"], "gpuscope study --sample");
}

TEST_F(CliStudy, SampleBuildsTheReport) {
  CliRun run = gpuscope("study --sample -o " + dir_.string());
  if (run.exit_code == kExitError && run.err.find("plotly") != std::string::npos) {
    GTEST_SKIP() << "built without plotly.js";
  }
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out,
              HasAllSubstrs({"Recorded on a lent NVIDIA H100 80GB HBM3",
                             "Compute achieved vs datasheet", "vit_b16 train",
                             "most efficient: bf16 2981 samples/s, 0.237 J/sample, 9.7 GiB"}));
  EXPECT_THAT(run.err, HasSubstr("sample study"));
  ASSERT_TRUE(fs::exists(dir_ / "report.html"));
  std::string html = slurp(dir_ / "report.html");
  EXPECT_THAT(html, HasSubstr("Compute achieved vs datasheet"));
  EXPECT_THAT(html, HasSubstr("Best mode per model"));
  EXPECT_TRUE(fs::exists(dir_ / "gpuscope.db"));
  EXPECT_TRUE(fs::exists(dir_ / "summary.json"));
}

TEST_F(CliStudy, SampleAsJson) {
  CliRun run = gpuscope("study --sample --json -o " + dir_.string());
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  json j = json::parse(run.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["kind"], "gpuscope.study");
  EXPECT_EQ(j["answers"]["compute"].size(), 7u);  // every precision, burned on the H100
  EXPECT_EQ(j["answers"]["models"].size(), 6u);   // 3 models x train/infer
}

TEST_F(CliStudy, SampleNeverOverwritesARealStudy) {
  ASSERT_EQ(gpuscope(study_args()).exit_code, kExitOk);
  const std::string before = slurp(dir_ / "study.json");
  CliRun run = gpuscope("study --sample -o " + dir_.string());
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("holds a study of its own"));
  EXPECT_EQ(slurp(dir_ / "study.json"), before);
  fs::path copy = base_ / "sample";
  ASSERT_EQ(gpuscope("study --sample -o " + copy.string()).exit_code, kExitOk);
  EXPECT_EQ(gpuscope("study --sample -o " + copy.string()).exit_code, kExitOk);  // rebuilt
}

TEST_F(CliStudy, SampleMissingIsAClearError) {
  CliRun run = gpuscope("study --sample -o " + dir_.string(), "GPUSCOPE_SAMPLE_DIR=/nonexistent");
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("sample study is not installed"));
}

TEST_F(CliStudy, RunsEveryStepAndPrintsTheAnswers) {
  CliRun run = gpuscope(study_args());
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(status_of("info"), "ok");
  EXPECT_EQ(status_of("burn-gpu0"), "ok");
  EXPECT_EQ(status_of("bench-gpu0"), "ok");
  EXPECT_EQ(status_of("sweep-gpu0"), "skipped");
  EXPECT_EQ(state()["options"]["level"], "quick");
  EXPECT_THAT(run.err, HasAllSubstrs({"quick level, 1 GPU(s), 4 steps", "[2/4] burn GPU 0", "left",
                                      "[4/4] power sweep"}));
  EXPECT_THAT(run.out, HasSubstr("bf16     706.4 TFLOP/s"));
  EXPECT_THAT(run.out, HasSubstr("fastest:        bf16 2981 samples/s"));
  EXPECT_TRUE(fs::exists(dir_ / "steps/info.json"));
  EXPECT_EQ(calls_of("info"), 0);  // collect_info in the study's process, no child
  EXPECT_EQ(json::parse(slurp(dir_ / "steps/info.json"))["kind"], "gpuscope.info");
  EXPECT_TRUE(fs::exists(dir_ / "steps/burn-gpu0.log"));
  EXPECT_TRUE(fs::exists(dir_ / "gpuscope.db"));
  EXPECT_TRUE(fs::exists(dir_ / "report.html") || run.err.find("plotly") != std::string::npos);
  EXPECT_EQ(calls_of("burn"), 1);
}

// Without --allow-power-changes the sweep step says what it would run and how to allow it; with
// it, the sweeps run (here the real `gpuscope sweep` on the simulated RTX 3090, rows by
// gpuscope-sim-workload): ViT-B/16 AMP bf16 training, then inference in the mode the bench step
// found fastest (bf16 in the sample's bench), the limit restored, the answers printed and stored.
TEST_F(CliStudy, AllowingPowerChangesRunsTheSweepsAndRestoresTheLimit) {
  auto scenario =
      json::parse(slurp(fs::path(GPUSCOPE_TEST_FIXTURES) / "nvml/rtx3090_power_sweep.json"));
  auto& curves = scenario["devices"][0]["power_response"]["curves"];
  curves["amp_bf16_train"] = curves["half_train"];
  curves["bf16_infer"] = curves["fp32_train"];
  const std::string scenario_path = (base_ / "rtx3090.json").string();
  std::ofstream(scenario_path) << scenario.dump();
  const fs::path state_file = base_ / "fake-nvml.state";
  fs::create_directories(base_ / "journals");
  const std::string env = "GPUSCOPE_FAKE_NVML_STATE=" + state_file.string() +
                          " GPUSCOPE_STATE_DIR=" + (base_ / "journals").string() +
                          " SIM_WORKLOAD=" + GPUSCOPE_SIM_WORKLOAD;

  CliRun skipped = gpuscope(study_args(), env, scenario_path);
  ASSERT_EQ(skipped.exit_code, kExitOk) << skipped.err;
  EXPECT_EQ(status_of("sweep-gpu0"), "skipped");
  EXPECT_THAT(skipped.err, HasSubstr("runs only with --allow-power-changes"));
  EXPECT_EQ(calls_of("sweep"), 0);

  dir_ = base_ / "allowed";
  CliRun run = gpuscope(study_args() + " --allow-power-changes", env, scenario_path);
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(state()["options"]["allow_power_changes"], true);
  EXPECT_EQ(status_of("sweep-gpu0"), "ok") << state()["steps"]["sweep-gpu0"];
  EXPECT_EQ(status_of("sweep-infer-gpu0"), "ok") << state()["steps"]["sweep-infer-gpu0"];
  const std::string args = slurp(calls_.string() + ".args");
  EXPECT_THAT(args, HasSubstr("sweep --gpu 0 --allow-power-changes --model vit_b16 --task train "
                              "--mode amp_bf16"));
  EXPECT_THAT(args, HasSubstr("--task infer --mode bf16"));
  const json train = json::parse(slurp(dir_ / "steps/sweep-gpu0.json"));
  EXPECT_EQ(train["workloads"][0]["label"], "vit_b16 train amp_bf16");
  EXPECT_EQ(train["workloads"][0]["points"].size(), 5u);  // 480 410 340 270 200 W
  EXPECT_THAT(run.out, HasSubstr("Power limit (sweep"));
  EXPECT_THAT(run.out, HasSubstr("GPU 0 vit_b16 infer bf16: "));
  // The prior 390 W is back (the fake's state file: "gpu INDEX NAME LIMIT_MW ...").
  EXPECT_THAT(slurp(state_file), HasSubstr(" 390000"));
  for (const auto& entry : fs::directory_iterator(base_ / "journals")) {  // locks may stay
    EXPECT_NE(entry.path().extension(), ".json") << entry.path();         // no journal left
  }
}

// On the fake's A100 in MIG mode, a study of one MIG instance runs burn and bench there (by
// its UUID, which both pass to CUDA_VISIBLE_DEVICES), and a study of the GPU runs them on each
// of its instances, since CUDA cannot use a GPU in MIG mode whole.
TEST_F(CliStudy, RunsOnMigInstances) {
  const std::string mig = "MIG-2a3b4c5d-6e7f-5a8b-9c0d-1e2f3a4b5c6d";
  CliRun run = gpuscope(study_args() + " --gpu " + mig, "", "a100_mig.json");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(status_of("burn-gpu0-mig5-0"), "ok");
  EXPECT_EQ(status_of("bench-gpu0-mig5-0"), "ok");
  EXPECT_THAT(run.err, HasSubstr("burn GPU 0 MIG 2g.10gb (GI 5 CI 0)"));
  const std::string args = slurp(calls_.string() + ".args");
  EXPECT_THAT(args, HasSubstr("burn --gpu " + mig));
  EXPECT_THAT(args, HasSubstr("bench --preset study-quick --gpu " + mig));

  dir_ = base_ / "whole";
  CliRun whole = gpuscope(study_args() + " --gpu 0", "", "a100_mig.json");
  ASSERT_EQ(whole.exit_code, kExitOk) << whole.err;
  EXPECT_EQ(state()["plan"].size(), 1u + 3 * 3);  // info, then burn, bench, sweep per instance
  EXPECT_EQ(status_of("burn-gpu0-mig1-0"), "ok");
  EXPECT_EQ(status_of("burn-gpu0-mig13-0"), "ok");
}

TEST_F(CliStudy, JsonSummaryOnStdout) {
  CliRun run = gpuscope(study_args() + " --json");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  json j = json::parse(run.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["status"], "finished");
  EXPECT_EQ(j["level"], "quick");
  EXPECT_EQ(j["steps"].size(), 4u);
}

TEST_F(CliStudy, MissingBenchIsSkippedAndTheStudyGoesOn) {
  CliRun run = gpuscope(study_args(), "FAKE_BENCH=missing");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(status_of("bench-gpu0"), "skipped");
  EXPECT_THAT(state()["steps"]["bench-gpu0"]["message"].get<std::string>(),
              HasSubstr("gpuscope-torch was not found"));
  EXPECT_THAT(run.out, HasSubstr("(no bench results)"));
  EXPECT_THAT(run.out, HasSubstr("note: step bench-gpu0 skipped"));
}

TEST_F(CliStudy, ACrashingStepIsContained) {
  CliRun run = gpuscope(study_args(), "FAKE_BURN=crash");
  EXPECT_EQ(run.exit_code, kExitCheckFailed) << run.err;
  EXPECT_EQ(status_of("burn-gpu0"), "failed");
  EXPECT_THAT(state()["steps"]["burn-gpu0"]["message"].get<std::string>(), HasSubstr("SIGSEGV"));
  EXPECT_EQ(status_of("bench-gpu0"), "ok");  // the study went on
  EXPECT_THAT(run.out, HasSubstr("step burn-gpu0 failed"));
  EXPECT_THAT(slurp(dir_ / "steps/burn-gpu0.log"), HasSubstr("something went badly wrong"));
}

TEST_F(CliStudy, InterruptSavesAndResumeFinishesWithoutRedoingSteps) {
  CliRun first = gpuscope(study_args(), "FAKE_BENCH=interrupt");
  ASSERT_EQ(first.exit_code, kExitInterrupted) << first.err;
  EXPECT_THAT(first.err, HasSubstr("gpuscope study --resume " + dir_.string()));
  EXPECT_EQ(status_of("burn-gpu0"), "ok");
  EXPECT_EQ(status_of("bench-gpu0"), "interrupted");
  EXPECT_FALSE(state()["steps"].contains("sweep-gpu0"));

  CliRun second = gpuscope("study --resume " + dir_.string());
  ASSERT_EQ(second.exit_code, kExitOk) << second.err;
  EXPECT_THAT(second.err, HasSubstr("resuming"));
  EXPECT_EQ(status_of("bench-gpu0"), "ok");
  EXPECT_EQ(status_of("sweep-gpu0"), "skipped");
  EXPECT_EQ(state()["options"]["level"], "quick");  // the study's own options
  EXPECT_EQ(calls_of("burn"), 1);
  EXPECT_EQ(calls_of("bench"), 2);
}

// The study killed while bench runs (a machine's time limit): --resume gives bench the rows it
// had finished (--resume FILE) instead of starting the matrix over.
TEST_F(CliStudy, ResumeGoesOnWithAKilledBenchFromItsRows) {
  json partial = json::parse(slurp(fs::path(GPUSCOPE_SAMPLE_SOURCE_DIR) / "steps/bench-gpu0.json"));
  const std::size_t planned = partial["rows"].size();
  partial["rows"].erase(partial["rows"].begin() + 5, partial["rows"].end());
  partial["complete"] = false;
  std::ofstream(base_ / "partial.json") << partial.dump(2);

  CliRun first =
      gpuscope(study_args(), "FAKE_BENCH=killed FAKE_PARTIAL=" + (base_ / "partial.json").string());
  EXPECT_NE(first.exit_code, kExitOk);
  EXPECT_EQ(status_of("burn-gpu0"), "ok");
  EXPECT_FALSE(state()["steps"].contains("bench-gpu0"));  // killed before it was recorded
  ASSERT_TRUE(fs::exists(dir_ / "steps/bench-gpu0.json"));

  CliRun second = gpuscope("study --resume " + dir_.string());
  ASSERT_EQ(second.exit_code, kExitOk) << second.err;
  EXPECT_EQ(calls_of("burn"), 1);
  EXPECT_EQ(calls_of("bench"), 2);
  const std::string bench_json = (fs::absolute(dir_) / "steps/bench-gpu0.json").string();
  EXPECT_THAT(slurp(calls_.string() + ".args"),
              HasSubstr("--json " + bench_json + " --store " +
                        (fs::absolute(dir_) / "steps/bench-gpu0.db").string() + " --guard off " +
                        "--resume " + bench_json));
  json given = json::parse(slurp(calls_.string() + ".resumed"));
  EXPECT_EQ(given["rows"].size(), 5u);  // the rows of the killed attempt, kept for bench
  EXPECT_EQ(given["complete"], false);
  EXPECT_EQ(status_of("bench-gpu0"), "ok");
  EXPECT_EQ(json::parse(slurp(dir_ / "steps/bench-gpu0.json"))["rows"].size(), planned);
  EXPECT_THAT(second.out, HasSubstr("fastest:        bf16 2981 samples/s"));
}

// Without an earlier bench document (an interrupt before its first row) bench starts afresh.
TEST_F(CliStudy, InterruptedBenchWithoutRowsStartsOver) {
  ASSERT_EQ(gpuscope(study_args(), "FAKE_BENCH=interrupt").exit_code, kExitInterrupted);
  ASSERT_EQ(gpuscope("study --resume " + dir_.string()).exit_code, kExitOk);
  EXPECT_THAT(slurp(calls_.string() + ".args"), Not(HasSubstr("--resume")));
  EXPECT_FALSE(fs::exists(calls_.string() + ".resumed"));
}

TEST_F(CliStudy, RefusesANonEmptyDirectoryWithoutForce) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "thesis.tex") << "mine";
  CliRun run = gpuscope(study_args());
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("--force"));
  EXPECT_FALSE(fs::exists(dir_ / "study.json"));
  CliRun forced = gpuscope(study_args() + " --force");
  EXPECT_EQ(forced.exit_code, kExitOk) << forced.err;
  EXPECT_TRUE(fs::exists(dir_ / "thesis.tex"));
}

TEST_F(CliStudy, AFileForTheFolderIsRefusedWithoutSuggestingForce) {
  std::ofstream(dir_) << "a file";
  for (const char* args : {"study --quick --force -o ", "study --sample -o "}) {
    CliRun run = gpuscope(args + dir_.string());
    EXPECT_EQ(run.exit_code, kExitUsage) << run.err;
    EXPECT_THAT(run.err, HasSubstr("-o takes a folder"));
    EXPECT_THAT(run.err, Not(HasSubstr("--force")));
    EXPECT_EQ(slurp(dir_), "a file");
  }
}

TEST_F(CliStudy, RefusesToStartOverAStudyWithoutForce) {
  ASSERT_EQ(gpuscope(study_args()).exit_code, kExitOk);
  CliRun again = gpuscope(study_args());
  EXPECT_EQ(again.exit_code, kExitUsage);
  EXPECT_THAT(again.err, HasSubstr("--resume"));
  EXPECT_EQ(calls_of("burn"), 1);
}

TEST_F(CliStudy, ResumeRefusesAStudyOfAnotherMachine) {
  ASSERT_EQ(gpuscope(study_args()).exit_code, kExitOk);
  json s = state();
  s["machine"]["gpus"][0]["uuid"] = "GPU-00000000-other";
  std::ofstream(dir_ / "study.json") << s.dump(2);
  CliRun run = gpuscope("study --resume " + dir_.string());
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("GPU-00000000-other"));
  EXPECT_THAT(run.err, HasSubstr("start a new study"));
}

TEST_F(CliStudy, ResumeRefusesANewerSchema) {
  ASSERT_EQ(gpuscope(study_args()).exit_code, kExitOk);
  json s = state();
  s["schema_version"] = 99;
  std::ofstream(dir_ / "study.json") << s.dump(2);
  CliRun run = gpuscope("study --resume " + dir_.string());
  EXPECT_EQ(run.exit_code, kExitError);
  EXPECT_THAT(run.err, HasSubstr("newer"));
}

TEST_F(CliStudy, ResumeOfSomethingElseIsNotAStudy) {
  fs::create_directories(dir_);
  CliRun run = gpuscope("study --resume " + dir_.string());
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("not a study"));
}

}  // namespace
}  // namespace gpuscope
