// Running the plan with a scripted step runner: success, failures and crashes (the study goes
// on), skipped bench, Ctrl-C, resume, what a step's end means, time estimates and progress text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "gpuscope/bench.h"
#include "gpuscope/study.h"
#include "support/matchers.h"
#include "test_gpu.h"

namespace gpuscope::study {
namespace {

using testing::gpu;

namespace fs = std::filesystem;
using gpuscope::testing::HasAllSubstrs;
using nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// What the fake child of one step does.
struct Script {
  std::optional<int> exit_code = 0;
  std::optional<int> term_signal;
  std::optional<json> output = json{{"kind", "fake"}};
  std::string stderr_tail;
  bool interrupted = false;
  bool timed_out = false;
  double seconds = 10;
};

// A step stopped by Ctrl-C (exit code 130, the signal forwarded to it), having written `output`.
Script interrupted_step(std::optional<json> output = json{{"kind", "fake"}}) {
  Script stopped;
  stopped.exit_code = 130;
  stopped.interrupted = true;
  stopped.output = std::move(output);
  return stopped;
}

class FakeRunner : public StepRunner {
 public:
  std::map<std::string, Script> scripts;
  std::vector<std::string> ran;
  std::map<std::string, std::vector<std::string>> args;  // each step's arguments, as run
  std::map<std::string, std::string> found;  // what was in a step's JSON and log files before

  ChildEnd run(const Step& step, const StepFiles& files) override {
    ran.push_back(step.id);
    args[step.id] = step.args;
    for (const fs::path& f : {files.json, files.log}) {
      if (!fs::exists(f)) continue;
      std::ifstream in(f);
      found[step.id] += std::string(std::istreambuf_iterator<char>(in), {});
    }
    Script s = scripts.count(step.id) ? scripts[step.id] : Script{};
    if (s.output) std::ofstream(files.json) << s.output->dump();
    std::ofstream(files.log) << "log of " << step.id << '\n';
    ChildEnd end;
    end.exit_code = s.exit_code;
    end.term_signal = s.term_signal;
    end.interrupted = s.interrupted;
    end.timed_out = s.timed_out;
    end.seconds = s.seconds;
    end.output = s.output;
    end.stderr_tail = s.stderr_tail;
    return end;
  }
};

fs::path fresh_dir(const std::string& name) {
  fs::path dir =
      fs::path(::testing::TempDir()) / ("study_run_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

State new_state() {
  State state;
  state.machine = {"node1", {gpu(0, "GPU-aaa", "NVIDIA H100 80GB HBM3")}};
  state.plan = *build_plan({}, state.machine);
  return state;
}

TEST(StudyRun, RunsEveryStepInOrderAndSavesTheState) {
  fs::path dir = fresh_dir("all_ok");
  State state = new_state();
  FakeRunner runner;
  auto outcome = run_steps(state, dir, runner, {});
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_FALSE(outcome->interrupted);
  EXPECT_EQ(outcome->steps_run, 3);
  EXPECT_THAT(runner.ran, ElementsAre("info", "burn-gpu0", "bench-gpu0"));  // sweep never runs
  EXPECT_EQ(state.steps.at("sweep-gpu0").status, StepStatus::skipped);
  EXPECT_THAT(state.steps.at("sweep-gpu0").message, HasSubstr("--allow-power-changes"));
  EXPECT_EQ(state.steps.at("burn-gpu0").json_path, "steps/burn-gpu0.json");
  EXPECT_EQ(state.steps.at("burn-gpu0").log_path, "steps/burn-gpu0.log");
  auto saved = load_state(dir);
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(saved->steps.size(), 4u);
  EXPECT_EQ(saved->steps.at("bench-gpu0").status, StepStatus::ok);
}

// With --allow-power-changes the sweeps run after the bench, the inference one in the mode that
// bench found fastest, each with a store of its own (the results store takes its runs).
TEST(StudyRun, TheSweepStepsRunWithTheFastestInferenceModeOfTheBench) {
  fs::path dir = fresh_dir("sweeps");
  State state;
  state.machine = {"node1", {gpu(0, "GPU-aaa", "NVIDIA H100 80GB HBM3")}};
  Options o;
  o.allow_power_changes = true;
  state.options = o;
  state.plan = *build_plan(o, state.machine);
  FakeRunner runner;
  runner.scripts["bench-gpu0"].output =
      json{{"kind", "gpuscope.bench"},
           {"answers", json::array({{{"model", "vit_b16"},
                                     {"task", "infer"},
                                     {"fastest", {{"mode", "fp8"}, {"samples_per_second", 9}}}}})}};
  auto outcome = run_steps(state, dir, runner, {});
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_THAT(runner.ran,
              ElementsAre("info", "burn-gpu0", "bench-gpu0", "sweep-gpu0", "sweep-infer-gpu0"));
  EXPECT_THAT(runner.args["sweep-gpu0"], Contains("amp_bf16"));
  EXPECT_THAT(runner.args["sweep-infer-gpu0"], Contains("fp8"));
  EXPECT_THAT(runner.args["sweep-infer-gpu0"], Not(Contains("{fastest_infer_mode}")));
  EXPECT_EQ(step_files(dir, state.plan[3]).store.filename(), "sweep-gpu0.db");
  EXPECT_TRUE(load_state(dir)->options.allow_power_changes);
}

TEST(StudyRun, AFailingAndACrashingStepDoNotStopTheStudy) {
  fs::path dir = fresh_dir("failures");
  State state = new_state();
  FakeRunner runner;
  runner.scripts["burn-gpu0"] = {std::nullopt, SIGSEGV, std::nullopt, "worker: cuBLAS died"};
  runner.scripts["bench-gpu0"] = {
      6, std::nullopt, json{{"rows", json::array({{{"mode", "fp32"}}})}}, "out of memory"};
  auto outcome = run_steps(state, dir, runner, {});
  ASSERT_TRUE(outcome.ok());
  EXPECT_THAT(runner.ran, ElementsAre("info", "burn-gpu0", "bench-gpu0"));
  const StepRecord& burn = state.steps.at("burn-gpu0");
  EXPECT_EQ(burn.status, StepStatus::failed);
  EXPECT_THAT(burn.message, HasSubstr("SIGSEGV"));
  EXPECT_THAT(burn.message, HasSubstr("cuBLAS died"));
  EXPECT_EQ(burn.json_path, "");  // it left no output
  const StepRecord& bench = state.steps.at("bench-gpu0");
  EXPECT_EQ(bench.status, StepStatus::failed);
  EXPECT_THAT(bench.message, HasSubstr("rows measured are kept"));
  EXPECT_EQ(state.steps.at("sweep-gpu0").status, StepStatus::skipped);
}

// A step that found no GPU (gpuscope's exit code 3) ends the study at once: every step after it
// would measure nothing too.
TEST(StudyRun, AStepThatFindsNoGpuStopsTheStudyAndSaysSo) {
  fs::path dir = fresh_dir("no_gpu");
  State state = new_state();
  FakeRunner runner;
  runner.scripts["burn-gpu0"] = {3, std::nullopt, std::nullopt,
                                 "gpuscope: error: no CUDA device is visible"};
  auto outcome = run_steps(state, dir, runner, {});
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_THAT(runner.ran, ElementsAre("info", "burn-gpu0"));
  ASSERT_TRUE(outcome->no_gpu.has_value());
  EXPECT_THAT(*outcome->no_gpu, HasSubstr("no CUDA device is visible"));
  EXPECT_EQ(state.steps.at("burn-gpu0").status, StepStatus::skipped);
  EXPECT_EQ(state.steps.count("bench-gpu0"), 0u);  // not run: --resume runs it
}

TEST(StudyRun, InterruptStopsAfterTheStepAndResumeRedoesOnlyIt) {
  fs::path dir = fresh_dir("resume");
  State state = new_state();
  FakeRunner first;
  first.scripts["burn-gpu0"] = interrupted_step();
  auto outcome = run_steps(state, dir, first, {});
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->interrupted);
  EXPECT_THAT(first.ran, ElementsAre("info", "burn-gpu0"));

  auto saved = load_state(dir);
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(saved->steps.at("burn-gpu0").status, StepStatus::interrupted);
  EXPECT_FALSE(saved->steps.count("bench-gpu0"));

  State resumed = std::move(saved).value();
  FakeRunner second;
  auto again = run_steps(resumed, dir, second, {});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->interrupted);
  EXPECT_THAT(second.ran, ElementsAre("burn-gpu0", "bench-gpu0"));  // info is not redone
  EXPECT_EQ(resumed.steps.at("burn-gpu0").status, StepStatus::ok);

  FakeRunner third;  // a finished study runs nothing
  ASSERT_TRUE(run_steps(resumed, dir, third, {}).ok());
  EXPECT_TRUE(third.ran.empty());
}

// A bench document with `rows` of `planned` rows finished, as bench leaves it mid-matrix.
json unfinished_bench(std::size_t rows, std::size_t planned) {
  bench::BenchResult r;
  r.planned = planned;
  r.complete = false;
  for (std::size_t i = 0; i < rows; ++i) {
    bench::Row row;
    row.spec.model = "vit_b16";
    row.spec.task = "infer";
    row.spec.mode = bench::all_modes()[i];
    row.samples_per_second = 100;
    r.rows.push_back(row);
  }
  return bench::bench_to_json(r);
}

// Interrupted, or the study killed outright (no record of the step): the bench step runs again
// with --resume on the JSON it left, which is kept; its log goes.
TEST(StudyRun, AnUnfinishedBenchGoesOnFromItsRows) {
  for (bool killed : {false, true}) {
    fs::path dir = fresh_dir(killed ? "bench_killed" : "bench_interrupted");
    State state = new_state();
    FakeRunner first;
    first.scripts["bench-gpu0"] = interrupted_step(unfinished_bench(2, 5));
    ASSERT_TRUE(run_steps(state, dir, first, {}).ok());
    EXPECT_THAT(first.args["bench-gpu0"], Not(Contains("--resume")));
    EXPECT_THAT(state.steps.at("bench-gpu0").message, HasSubstr("goes on from its finished rows"));
    if (killed) state.steps.erase("bench-gpu0");

    FakeRunner second;
    ASSERT_TRUE(run_steps(state, dir, second, {}).ok());
    EXPECT_THAT(second.ran, ElementsAre("bench-gpu0"));
    const auto& args = second.args["bench-gpu0"];
    ASSERT_GE(args.size(), 2u);
    EXPECT_THAT(std::vector<std::string>(args.end() - 2, args.end()),
                ElementsAre("--resume", "{json}"));
    EXPECT_THAT(second.found["bench-gpu0"], HasSubstr("\"rows_planned\":5"));
    EXPECT_THAT(second.found["bench-gpu0"], Not(HasSubstr("log of bench-gpu0")));
    EXPECT_EQ(state.steps.at("bench-gpu0").status, StepStatus::ok);
    // The plan itself is unchanged: the next attempt is decided afresh.
    EXPECT_THAT(state.plan[2].args, Not(Contains("--resume")));
  }
}

// On a GPU slower than the estimates, the bench step runs out of its time budget: the study goes
// on (answers from the rows so far), and --resume gives the bench its remaining rows.
TEST(StudyRun, ABenchOutOfTimeGoesOnFromItsRowsOnResume) {
  fs::path dir = fresh_dir("bench_timeout");
  State state = new_state();
  FakeRunner first;
  Script stopped;
  stopped.exit_code.reset();
  stopped.term_signal = SIGKILL;
  stopped.timed_out = true;
  stopped.output = unfinished_bench(3, 5);
  first.scripts["bench-gpu0"] = stopped;
  auto outcome = run_steps(state, dir, first, {});
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->interrupted);
  const StepRecord& cut = state.steps.at("bench-gpu0");
  EXPECT_EQ(cut.status, StepStatus::failed);
  EXPECT_TRUE(cut.resumable);
  EXPECT_THAT(cut.message, HasSubstr("the rows measured are kept and --resume goes on from them"));
  EXPECT_FALSE(step_done(state, "bench-gpu0"));
  auto saved = load_state(dir);
  ASSERT_TRUE(saved.ok());
  EXPECT_TRUE(saved->steps.at("bench-gpu0").resumable);  // kept in study.json

  FakeRunner second;
  ASSERT_TRUE(run_steps(*saved, dir, second, {}).ok());
  EXPECT_THAT(second.ran, ElementsAre("bench-gpu0"));
  EXPECT_THAT(second.args["bench-gpu0"], Contains("--resume"));
  const StepRecord& done = saved->steps.at("bench-gpu0");
  EXPECT_EQ(done.status, StepStatus::ok);
  EXPECT_FALSE(done.resumable);
  EXPECT_DOUBLE_EQ(done.duration_seconds, 20.0);  // both attempts
  EXPECT_TRUE(step_done(*saved, "bench-gpu0"));
}

// Leftovers that bench cannot go on from (not a bench document, no rows) are removed.
TEST(StudyRun, ABenchLeftoverWithoutRowsIsRunAfresh) {
  for (const json& leftover : {json{{"kind", "fake"}}, unfinished_bench(0, 5)}) {
    fs::path dir = fresh_dir("bench_no_rows");
    State state = new_state();
    FakeRunner first;
    first.scripts["bench-gpu0"] = interrupted_step(leftover);
    ASSERT_TRUE(run_steps(state, dir, first, {}).ok());
    FakeRunner second;
    ASSERT_TRUE(run_steps(state, dir, second, {}).ok());
    EXPECT_THAT(second.args["bench-gpu0"], Not(Contains("--resume")));
    EXPECT_EQ(second.found["bench-gpu0"], "");
  }
}

TEST(StudyRun, StopRequestedBetweenStepsRunsNothingMore) {
  fs::path dir = fresh_dir("stop");
  State state = new_state();
  FakeRunner runner;
  RunOptions options;
  options.stop_requested = [&runner] { return runner.ran.size() >= 1; };
  auto outcome = run_steps(state, dir, runner, options);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->interrupted);
  EXPECT_THAT(runner.ran, ElementsAre("info"));
}

TEST(StudyRun, ReportsProgressForEachStep) {
  fs::path dir = fresh_dir("progress");
  State state = new_state();
  FakeRunner runner;
  std::vector<std::string> lines;
  RunOptions options;
  options.on_progress = [&lines](const Progress& p) { lines.push_back(progress_line(p)); };
  ASSERT_TRUE(run_steps(state, dir, runner, options).ok());
  ASSERT_GE(lines.size(), 7u);  // start and end of three steps, end of the skipped one
  EXPECT_THAT(lines.front(), HasSubstr("[1/4] info"));
  EXPECT_THAT(lines.front(), HasSubstr("left"));
  EXPECT_THAT(lines.back(), HasAllSubstrs({"[4/4] power sweep", "skipped",
                                           "runs only with --allow-power-changes"}));
}

// --- what a step's end means -----------------------------------------------------------------

Step step_of(StepKind kind) {
  auto plan = build_plan({}, {"h", {gpu(0, "GPU-a", "x")}});
  for (const Step& s : *plan) {
    if (s.kind == kind) return s;
  }
  return {};
}

TEST(StudyClassify, ExitZeroWithOutputIsOk) {
  ChildEnd end;
  end.exit_code = 0;
  end.output = json::object();
  EXPECT_EQ(classify_step_end(step_of(StepKind::burn), end).status, StepStatus::ok);
  end.output.reset();
  StepRecord r = classify_step_end(step_of(StepKind::burn), end);
  EXPECT_EQ(r.status, StepStatus::failed);
  EXPECT_THAT(r.message, HasSubstr("without its JSON"));
}

TEST(StudyClassify, BurnThatFoundProblemsIsOk) {
  ChildEnd end;
  end.exit_code = 1;
  end.output = json{{"kind", "gpuscope.burn"}};
  StepRecord r = classify_step_end(step_of(StepKind::burn), end);
  EXPECT_EQ(r.status, StepStatus::ok);
  EXPECT_THAT(r.message, HasSubstr("problems"));
  end.exit_code = 5;
  end.output = json{{"error", {{"code", "gpu_lost"}, {"message", "GPU 0 fell off the bus"}}}};
  r = classify_step_end(step_of(StepKind::burn), end);
  EXPECT_EQ(r.status, StepStatus::failed);
  EXPECT_THAT(r.message, HasSubstr("fell off the bus"));
}

TEST(StudyClassify, BenchThatCannotRunIsSkippedWithItsReason) {
  ChildEnd unknown;  // a gpuscope without `bench`
  unknown.exit_code = 2;
  unknown.stderr_tail = "The following argument was not expected: bench";
  StepRecord r = classify_step_end(step_of(StepKind::bench), unknown);
  EXPECT_EQ(r.status, StepStatus::skipped);
  EXPECT_THAT(r.message, HasSubstr("not expected: bench"));

  ChildEnd no_torch;
  no_torch.exit_code = 2;
  no_torch.output =
      json{{"error", {{"code", "not_found"}, {"message", "gpuscope-torch is not built"}}}};
  r = classify_step_end(step_of(StepKind::bench), no_torch);
  EXPECT_EQ(r.status, StepStatus::skipped);
  EXPECT_EQ(r.message, "gpuscope-torch is not built");

  ChildEnd silent;
  silent.exit_code = 6;
  EXPECT_THAT(classify_step_end(step_of(StepKind::bench), silent).message,
              HasSubstr("exit code 6"));
}

TEST(StudyClassify, SignalsTimeoutsAndInterrupts) {
  ChildEnd killed;
  killed.term_signal = SIGKILL;
  EXPECT_EQ(classify_step_end(step_of(StepKind::bench), killed).status, StepStatus::failed);
  ChildEnd timed_out;
  timed_out.term_signal = SIGTERM;
  timed_out.timed_out = true;
  timed_out.seconds = 400;
  StepRecord r = classify_step_end(step_of(StepKind::bench), timed_out);
  EXPECT_EQ(r.status, StepStatus::failed);
  EXPECT_THAT(r.message, HasSubstr("timed out"));
  ChildEnd ctrl_c;
  ctrl_c.exit_code = 130;
  EXPECT_EQ(classify_step_end(step_of(StepKind::burn), ctrl_c).status, StepStatus::interrupted);
  ChildEnd forwarded;
  forwarded.exit_code = 0;
  forwarded.output = json::object();
  forwarded.interrupted = true;
  EXPECT_EQ(classify_step_end(step_of(StepKind::burn), forwarded).status, StepStatus::interrupted);
}

// --- time estimates -----------------------------------------------------------------------------

TEST(StudyEstimate, SumsTheEstimatesOfStepsNotDone) {
  State state = new_state();  // info 3 + burn 75 + bench 600 (sweep: skipped)
  EXPECT_DOUBLE_EQ(estimate_remaining(state, "", 0), 3 + 75 + 600);
  EXPECT_DOUBLE_EQ(estimate_remaining(state, "info", 1), 2 + 75 + 600);
}

TEST(StudyEstimate, RefinedByHowLongFinishedStepsTook) {
  State state = new_state();
  state.steps["info"].duration_seconds = 0.1;  // too short to learn from
  StepRecord burn;
  burn.duration_seconds = 150;  // twice its estimate of 75
  state.steps["burn-gpu0"] = burn;
  EXPECT_DOUBLE_EQ(estimate_remaining(state, "bench-gpu0", 0), 2 * 600);
  state.steps["burn-gpu0"].duration_seconds = 7000;  // an outlier is clamped to 3x
  EXPECT_DOUBLE_EQ(estimate_remaining(state, "bench-gpu0", 0), 3 * 600);
  state.steps["burn-gpu0"].duration_seconds = 7;  // and to 0.5x
  EXPECT_DOUBLE_EQ(estimate_remaining(state, "bench-gpu0", 0), 0.5 * 600);
  state.steps["burn-gpu0"].status = StepStatus::skipped;  // skipped steps took no time
  EXPECT_DOUBLE_EQ(estimate_remaining(state, "bench-gpu0", 0), 600);
}

TEST(StudyEstimate, AResumedBenchNeedsOnlyWhatIsLeftOfIt) {
  State state = new_state();
  state.steps["info"].duration_seconds = 3;
  state.steps["burn-gpu0"].duration_seconds = 75;
  // 30 of 42 rows kept from the attempt the call's time limit cut.
  EXPECT_DOUBLE_EQ(estimate_remaining(state, "bench-gpu0", 0, 30.0 / 42), 600 * 12.0 / 42);
  EXPECT_DOUBLE_EQ(estimate_remaining(state, "bench-gpu0", 0, 0), 600);
}

TEST(StudyEstimate, AStepPastItsEstimateStillNeedsALittle) {
  State state = new_state();
  double left = estimate_remaining(state, "info", 100);
  EXPECT_GT(left, 75 + 600);
  EXPECT_LT(left, 75 + 600 + 3);
}

TEST(StudyProgress, LineSaysStepCountElapsedAndRemaining) {
  State state = new_state();
  Progress p;
  p.index = 2;
  p.total = 4;
  p.step = &state.plan[1];
  p.step_elapsed_seconds = 42;
  p.study_elapsed_seconds = 65;
  p.remaining_seconds = 190;
  std::string line = progress_line(p);
  EXPECT_THAT(line,
              HasAllSubstrs({"[2/4] burn GPU 0", "step 0:42", "study 1:05 elapsed", "~3:10 left"}));
  StepRecord done;
  done.status = StepStatus::failed;
  done.duration_seconds = 38;
  done.message = "crashed";
  p.step_finished = true;
  p.record = &done;
  EXPECT_THAT(progress_line(p), HasSubstr("failed in 0:38 — crashed"));
}

TEST(StudyProgress, FormatsDurations) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(65), "1:05");
  EXPECT_EQ(format_duration(723), "12:03");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-5), "0:00");
}

}  // namespace
}  // namespace gpuscope::study
