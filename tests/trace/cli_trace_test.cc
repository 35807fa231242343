// `gpuscope trace -- CMD` end to end on a machine without a GPU: the real binary with NVML
// replaced by the fake library, the injection library loaded into a small NVTX program
// (tests/inject/nvtx_app.cc) that marks steps as the Python shim does. CUPTI never starts here
// (no CUDA driver), so these cover everything but the GPU records: steps from marks, the window,
// the run folder, exit codes, a killed program, refusals before the command starts, and
// reading a folder again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "support/cli_run.h"
#include "support/trace_ranks.h"
#include "support/tracing_cli.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::fresh_tracing_dir;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::slurp;
using testing::tracing_gpuscope;
using testing::tracing_scratch;

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(slurp(path));
}

TEST(CliTrace, StepsMarkedByTheProgramAreTracedInTheWindow) {
  const std::string dir = fresh_tracing_dir("steps");
  CliRun r = tracing_gpuscope("trace --skip-steps 5 --steps 10 --interval 50 -o " + dir + " -- " +
                              GPUSCOPE_NVTX_APP + " steps 30");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Steps: 10 traced (from marks)"));
  EXPECT_THAT(r.err, HasSubstr("trace.json"));
  const auto summary = read_json(dir + "/summary.json");
  EXPECT_EQ(summary["kind"], "gpuscope.trace");
  EXPECT_EQ(summary["schema_version"], 1);
  EXPECT_EQ(summary["steps"]["source"], "marks");
  EXPECT_EQ(summary["steps"]["traced"], 10);
  EXPECT_EQ(summary["steps"]["first_traced"], 5);
  EXPECT_EQ(summary["steps"]["marked"], 29);  // 30 marks bound 29 steps
  EXPECT_EQ(summary["window"]["first_step"], 5);
  EXPECT_EQ(summary["window"]["end_step"], 15);
  EXPECT_EQ(summary["exit"]["code"], 0);
  ASSERT_EQ(summary["processes"].size(), 1u);
  EXPECT_EQ(summary["processes"][0]["cupti"], "not_loaded");  // no CUDA here
  // trace.json opens: valid JSON with a steps track.
  const auto trace = read_json(dir + "/trace.json");
  int steps = 0;
  for (const auto& e : trace["traceEvents"]) steps += e.value("cat", "") == "step" ? 1 : 0;
  EXPECT_EQ(steps, 10);
  EXPECT_TRUE(fs::exists(dir + "/telemetry.jsonl"));
}

// --light: the injection library records the per-launch kinds only, and the summary says the
// synchronizations were not recorded rather than counting none.
TEST(CliTrace, ALightTraceRecordsNoSynchronizationsAndSaysSo) {
  const std::string dir = fresh_tracing_dir("light");
  CliRun r = tracing_gpuscope("trace --light --skip-steps 2 --steps 5 -o " + dir + " -- " +
                              GPUSCOPE_NVTX_APP + " steps 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Host waited on the GPU: not recorded (a light trace)"));
  EXPECT_THAT(r.err, HasSubstr("a light trace (--light)"));
  const auto summary = read_json(dir + "/summary.json");
  EXPECT_EQ(summary["syncs"]["recorded"], false);
  EXPECT_TRUE(summary["syncs"]["count"].is_null());
  EXPECT_FALSE(summary["syncs"].contains("per_step"));
  ASSERT_FALSE(summary["steps"]["per_step"].empty());
  EXPECT_TRUE(summary["steps"]["per_step"][0]["syncs"].is_null());  // each step's too
  EXPECT_TRUE(summary["steps"]["per_step"][0]["sync_s"].is_null());
  bool header_seen = false;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("gpuscope-trace-", 0) != 0) continue;
    std::istringstream lines(slurp(entry.path().string()));
    std::string first;
    std::getline(lines, first);
    EXPECT_EQ(nlohmann::json::parse(first)["kinds"], "kernel,memcpy,memset,overhead");
    header_seen = true;
  }
  EXPECT_TRUE(header_seen);

  const std::string full = fresh_tracing_dir("not-light");
  r = tracing_gpuscope("trace --skip-steps 2 --steps 5 -o " + full + " -- " + GPUSCOPE_NVTX_APP +
                       " steps 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(full + "/summary.json")["syncs"]["recorded"], true);
  EXPECT_EQ(read_json(full + "/summary.json")["syncs"]["count"], 0);
  EXPECT_THAT(r.err, Not(HasSubstr("light trace")));
}

// A slow start (1.5 s of sleep, as a torch.compile) longer than the time warm-up (0.3 s): the
// window opens on time, and when the program then marks steps the traced ones begin at the
// skip. With the shim's steps-expected mark the window waits for the steps instead.
TEST(CliTrace, ASlowStartIsWarmUpAndTheTracedStepsBeginAtTheSkip) {
  const std::string app = std::string(GPUSCOPE_NVTX_APP) + " slow-steps 1500 30 12";
  const std::string window = " --skip 0.3 --skip-steps 3 --steps 4 --duration 2 -o ";
  const std::string dir = fresh_tracing_dir("slow");
  CliRun timed = tracing_gpuscope("trace" + window + dir + " -- " + app);
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  auto summary = read_json(dir + "/summary.json");
  EXPECT_EQ(summary["window"]["begin_reason"], "time");
  EXPECT_EQ(summary["window"]["steps_from_step"], 3);
  EXPECT_EQ(summary["window"]["end_reason"], "steps");
  EXPECT_EQ(summary["steps"]["traced"], 4);
  EXPECT_THAT(timed.err, HasSubstr("opened before the first step; steps [3, 7) traced"));
  EXPECT_THAT(timed.err, HasSubstr("opened before the first step; steps [3, 7) traced"));

  CliRun expected = tracing_gpuscope("trace --json" + window + fresh_tracing_dir("expected") +
                                     " -- " + app + " expect");
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  summary = nlohmann::json::parse(expected.out);
  EXPECT_EQ(summary["window"]["begin_reason"], "steps");
  EXPECT_EQ(summary["window"]["first_step"], 3);
  EXPECT_FALSE(summary["window"].contains("steps_from_step"));
  EXPECT_EQ(summary["steps"]["traced"], 4);
}

// Steps of 0.4 s, slower than --duration 0.3: a program that marks steps gets the steps it was
// asked for.
TEST(CliTrace, TheDurationDoesNotCutAProgramThatMarksSteps) {
  CliRun r = tracing_gpuscope("trace --json --skip-steps 1 --steps 5 --duration 0.3 -o " +
                              fresh_tracing_dir("slow-steps") + " -- " +
                              std::string(GPUSCOPE_NVTX_APP) + " slow-steps 0 400 7");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["window"]["end_reason"], "steps");
  EXPECT_EQ(summary["steps"]["traced"], 5);
}

// gpuscope-torch's steps (one range name for all, a step mark at each end): found without
// options, and by the range when asked.
TEST(CliTrace, GpuscopeTorchStepsAreFoundByMarkAndByRange) {
  const std::string dir = fresh_tracing_dir("torch-steps");
  CliRun r = tracing_gpuscope("trace --json --skip-steps 2 --steps 4 -o " + dir + " -- " +
                              GPUSCOPE_NVTX_APP + " torch-steps 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["steps"]["source"], "marks");
  EXPECT_EQ(summary["steps"]["traced"], 4);
  EXPECT_EQ(summary["window"]["first_step"], 2);
  CliRun again =
      tracing_gpuscope("trace --analyse " + dir + " --json --step-range 'gpuscope-torch step'");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  summary = nlohmann::json::parse(again.out);
  EXPECT_EQ(summary["steps"]["source"], "range");
  EXPECT_EQ(summary["steps"]["traced"], 4);
}

TEST(CliTrace, TheCommandRunsWithNvlinkMulticastOff) {
  CliRun r = tracing_gpuscope("trace --duration 0 -o " + fresh_tracing_dir("nvls") +
                              " -- sh -c 'echo \"[$NCCL_NVLS_ENABLE]\"'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[0]"));
}

// Two ranks of a data-parallel job, each its own process and GPU: a folder derived from the
// labelled H100 recording (tests/fixtures/trace/h100_smoke_window, pid 773 on GPU 0) by copying
// it as pid 774 on GPU 1. The summary is one rank's (its steps and its GPU only), and `ranks`
// has each one's: nothing of one rank is counted in the other's steps.
TEST(CliTrace, RanksAreSummarizedEachWithoutMixingTheirSteps) {
  const std::string h100 = std::string(GPUSCOPE_TEST_FIXTURES) + "/trace/h100_smoke_window";
  const std::string one = fresh_tracing_dir("one-rank");
  const std::string two = fresh_tracing_dir("two-ranks");
  fs::create_directories(one);
  fs::create_directories(two);
  fs::copy_file(h100 + "/gpuscope-trace-773.jsonl", one + "/gpuscope-trace-773.jsonl");
  testing::write_two_ranks(two);

  CliRun alone = tracing_gpuscope("trace --analyse " + one + " --json");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  CliRun both = tracing_gpuscope("trace --analyse " + two + " --json");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  const auto a = nlohmann::json::parse(alone.out);
  const auto b = nlohmann::json::parse(both.out);
  ASSERT_GT(a["gpu"]["kernels"].get<int>(), 0);
  EXPECT_EQ(b["gpu"]["kernels"], a["gpu"]["kernels"]);
  EXPECT_EQ(b["gpu"]["devices"], nlohmann::json::array({0}));
  EXPECT_EQ(b["steps"]["traced"], a["steps"]["traced"]);
  EXPECT_NEAR(b["gpu"]["busy_share"].get<double>(), a["gpu"]["busy_share"].get<double>(), 1e-9);
  ASSERT_EQ(b["ranks"].size(), 2u) << b.dump().substr(0, 1000);
  for (int r = 0; r < 2; ++r) {
    const auto& rank = b["ranks"][r];
    EXPECT_EQ(rank["pid"], 773 + r);
    EXPECT_EQ(rank["devices"], nlohmann::json::array({r}));
    EXPECT_EQ(rank["steps"]["traced"], a["steps"]["traced"]);
    EXPECT_EQ(rank["gpu"]["kernels"], a["gpu"]["kernels"]);
  }
  EXPECT_FALSE(a.contains("ranks"));  // one GPU process: no ranks
}

// Two data-parallel ranks made by hand: rank 0's GPU computes 7 ms a step, rank 1's 8 ms; each
// rank's collectives and the time they ran alone (rank 0 also waits for rank 1: 2 ms, not 1).
TEST(CliTrace, EachRanksCollectivesAndTheirExposedTime) {
  const std::string dir = fresh_tracing_dir("ddp-ranks");
  fs::create_directories(dir);
  testing::write_data_parallel_rank(dir, 901, 0, 7, 8);
  testing::write_data_parallel_rank(dir, 902, 1, 8, 8);
  CliRun run = tracing_gpuscope("trace --analyse " + dir + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_NEAR(j["ranks"][0]["communication"]["exposed_s_per_step"].get<double>(), 2e-3, 1e-6);
  EXPECT_NEAR(j["ranks"][1]["communication"]["exposed_s_per_step"].get<double>(), 1e-3, 1e-6);
  EXPECT_NEAR(j["ranks"][1]["communication"]["seconds_per_step"].get<double>(), 3e-3, 1e-6);
}

TEST(CliTrace, JsonGoesToStdoutAlone) {
  const std::string dir = fresh_tracing_dir("json");
  CliRun r = tracing_gpuscope("trace --json --skip-steps 0 --steps 3 -o " + dir + " -- " +
                              GPUSCOPE_NVTX_APP + " steps 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);  // nothing else on stdout
  // Steps [0, 3) are in the window; the first step of a run has no mark before it, so two of
  // them are bounded by marks on both sides.
  EXPECT_EQ(summary["steps"]["traced"], 2);
}

TEST(CliTrace, ACommandThatUsesNoGpuKeepsItsExitCodeAndIsSaidSo) {
  const std::string dir = fresh_tracing_dir("plain");
  CliRun r =
      tracing_gpuscope("trace -o " + dir + " -- " + std::string(GPUSCOPE_NVTX_APP) + " plain");
  EXPECT_EQ(r.exit_code, 3);  // the program's own
  EXPECT_THAT(r.out, HasSubstr("plain"));
  EXPECT_THAT(r.err, HasSubstr("no GPU work seen"));
  const auto summary = read_json(dir + "/summary.json");
  EXPECT_EQ(summary["processes"].size(), 0u);
  EXPECT_EQ(summary["exit"]["code"], 3);
}

TEST(CliTrace, AProgramKilledMidRunKeepsItsRecordsMarked) {
  const std::string dir = fresh_tracing_dir("killed");
  CliRun r = tracing_gpuscope("trace --skip-steps 0 -o " + dir + " -- " +
                              std::string(GPUSCOPE_NVTX_APP) + " sigkill");
  EXPECT_EQ(r.exit_code, 128 + 9);
  const auto summary = read_json(dir + "/summary.json");
  ASSERT_EQ(summary["processes"].size(), 1u);
  EXPECT_EQ(summary["processes"][0]["truncated"], true);
  EXPECT_THAT(r.err, HasSubstr("killed or still running"));
}

TEST(CliTrace, RefusedBeforeTheCommandStarts) {
  const std::string marker = tracing_scratch() + "/" + std::to_string(getpid()) + "-ran";
  fs::remove(marker);
  // A folder that already holds a trace.
  const std::string dir = fresh_tracing_dir("twice");
  ASSERT_EQ(tracing_gpuscope("trace -o " + dir + " -- true").exit_code, 0);
  CliRun again = tracing_gpuscope("trace -o " + dir + " -- touch " + marker);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.err, HasSubstr("already holds a trace"));
  // A folder that cannot be made (under a regular file).
  const std::string file = tracing_scratch() + "/" + std::to_string(getpid()) + "-file";
  { std::ofstream(file) << "x"; }
  CliRun bad = tracing_gpuscope("trace -o " + file + "/sub -- touch " + marker);
  EXPECT_EQ(bad.exit_code, 6);
  EXPECT_THAT(bad.err, HasSubstr("cannot create"));
  // A command that does not exist, as a shell answers.
  EXPECT_EQ(
      tracing_gpuscope("trace -o " + fresh_tracing_dir("nocmd") + " -- /no/such/program").exit_code,
      127);
  // No command at all.
  EXPECT_EQ(tracing_gpuscope("trace -o " + fresh_tracing_dir("none")).exit_code, 2);
  EXPECT_FALSE(fs::exists(marker));
}

// Without -o the run folder is trace-YYYYMMDD-HHMMSS, in the folder gpuscope runs in.
TEST(CliTrace, WithoutOutputTheRunFolderIsNamedAfterTheCommandAndTheTime) {
  const std::string dir = fresh_tracing_dir("default-folder");
  fs::create_directories(dir);
  CliRun r = testing::run_in(dir, "cd " + dir + " && env " + testing::tracing_env() + " " +
                                      GPUSCOPE_BIN + " trace --duration 0 -- true");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int folders = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    EXPECT_TRUE(
        std::regex_match(entry.path().filename().string(), std::regex("trace-[0-9]{8}-[0-9]{6}")))
        << entry.path();
    EXPECT_TRUE(fs::exists(entry.path() / "summary.json")) << entry.path();
    ++folders;
  }
  EXPECT_EQ(folders, 1);
}

TEST(CliTrace, AFolderIsReadAgainWithoutRunningAnything) {
  const std::string dir = fresh_tracing_dir("again");
  ASSERT_EQ(tracing_gpuscope("trace --skip-steps 2 --steps 4 -o " + dir + " -- " +
                             std::string(GPUSCOPE_NVTX_APP) + " steps 10")
                .exit_code,
            0);
  CliRun r = tracing_gpuscope("trace --analyse " + dir + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["steps"]["traced"], 4);
  EXPECT_EQ(tracing_gpuscope("trace --analyse " + dir + "/missing").exit_code, 2);
}

TEST(CliTrace, TheStoreHoldsATraceRunThatTheReportDraws) {
  const std::string dir = fresh_tracing_dir("store");
  const std::string db = dir + ".db";
  fs::remove(db);
  CliRun r =
      tracing_gpuscope("trace --store " + db + " --skip-steps 2 --steps 5 --interval 50 -o " + dir +
                       " -- " + GPUSCOPE_NVTX_APP + " steps 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("trace run 1 written to " + db));
  // The store's run and the folder give the same trace section.
  for (const std::string& input : {db, dir}) {
    const std::string out = dir + "-report.json";
    CliRun report = tracing_gpuscope("report --json " + out + " " + input);
    ASSERT_EQ(report.exit_code, 0) << input << ": " << report.err;
    const auto doc = read_json(out);
    const nlohmann::json* steps = nullptr;
    for (const auto& section : doc["sections"]) {
      for (const auto& block : section["blocks"]) {
        if (block.value("key", "") == "trace_steps") steps = &block;
      }
    }
    ASSERT_NE(steps, nullptr) << input << ": " << doc.dump().substr(0, 2000);
    EXPECT_EQ((*steps)["rows"].size(), 5u) << input;
  }
}

TEST(CliTrace, AStoreThatCannotBeWrittenIsRefusedBeforeTheCommandStarts) {
  const std::string dir = fresh_tracing_dir("store-refused");
  const std::string marker = dir + "-ran";
  CliRun r = tracing_gpuscope("trace --store /nonexistent-dir/x.db -o " + dir +
                              " -- sh -c 'touch " + marker + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent-dir/x.db"));
  EXPECT_FALSE(fs::exists(marker));
}

}  // namespace
}  // namespace gpuscope
