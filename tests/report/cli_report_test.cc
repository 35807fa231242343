// `gpuscope report` end to end: the real binary on the fixtures, checked on exit codes, files
// and messages. (tests/browser loads its HTML in Chromium.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuscope/exit_codes.h"
#include "gpuscope/store.h"
#include "support/cli_run.h"
#include "support/matchers.h"

namespace gpuscope {
namespace {

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;

using testing::CliRun;
using testing::slurp;

std::string scratch() {
  return testing::test_scratch_dir("gpuscope_report");
}

CliRun gpuscope(const std::string& dir, const std::string& args) {
  return testing::run_gpuscope(dir, "", args);
}

std::string fixtures() {
  std::string f = GPUSCOPE_TEST_FIXTURES;
  return f + "/report/h100_burn_worker_2026-11-22.jsonl " + f +
         "/info/h100_recorded_2026-11-22.json " + f + "/report/telemetry_handmade.records.json " +
         f + "/report/bench_handmade.records.json " + f +
         "/report/sweep_rtx3090_handmade.records.json";
}

TEST(CliReportTest, WritesOneSelfContainedHtmlFile) {
  std::string dir = scratch();
  CliRun run = gpuscope(dir, "report " + fixtures() + " -o " + dir + "/report.html");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.err, HasSubstr("wrote " + dir + "/report.html"));
  std::string html = slurp(dir + "/report.html");
  EXPECT_THAT(html, HasAllSubstrs({"<!DOCTYPE html>", "Fastest matrix rate", "plotly.js v"}));
}

TEST(CliReportTest, WritesEveryOtherFormatToo) {
  std::string dir = scratch();
  CliRun run = gpuscope(dir, "report " + fixtures() + " --json " + dir + "/r.json --csv " + dir +
                                 "/r.csv --md " + dir + "/r.md");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json doc = nlohmann::json::parse(slurp(dir + "/r.json"));
  EXPECT_EQ(doc["kind"], "gpuscope.report");
  EXPECT_THAT(slurp(dir + "/r.csv"), HasSubstr("burn_gemm,fp64,"));
  EXPECT_THAT(slurp(dir + "/r.md"), HasSubstr("## Summary"));
  EXPECT_TRUE(run.out.empty()) << "files asked for: nothing on stdout";
}

TEST(CliReportTest, PrintsToTheConsoleWithoutOutputFiles) {
  std::string dir = scratch();
  CliRun run = gpuscope(dir, std::string("report ") + GPUSCOPE_TEST_FIXTURES +
                                 "/report/sweep_rtx3090_handmade.records.json");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Power limit for 90 % speed"));
  EXPECT_THAT(run.out, HasSubstr("330 W"));
}

TEST(CliReportTest, ReportsOnAStoreAndListsItsRuns) {
  std::string dir = scratch();
  {
    auto store = store::Store::open(dir + "/results.db");
    ASSERT_TRUE(store.ok());
    auto runs = store::read_result_file(std::string(GPUSCOPE_TEST_FIXTURES) +
                                        "/report/bench_handmade.records.json");
    ASSERT_TRUE(runs.ok());
    ASSERT_TRUE((*store)->write((*runs)[0]).ok());
  }
  CliRun list = gpuscope(dir, "report " + dir + "/results.db --list");
  ASSERT_EQ(list.exit_code, kExitOk) << list.err;
  EXPECT_THAT(list.out, HasSubstr("bench"));
  EXPECT_THAT(list.out, HasSubstr("hand-made bench"));
  CliRun one = gpuscope(dir, "report " + dir + "/results.db --run 1 -o " + dir + "/r.md");
  ASSERT_EQ(one.exit_code, kExitOk) << one.err;
  EXPECT_THAT(slurp(dir + "/r.md"), HasSubstr("Fastest train mode"));
  CliRun missing = gpuscope(dir, "report " + dir + "/results.db --run 7");
  EXPECT_EQ(missing.exit_code, kExitUsage);
  EXPECT_THAT(missing.err, HasSubstr("no store given has a run 7"));
}

TEST(CliReportTest, ForeignFileIsAClearErrorAndStaysUntouched) {
  std::string dir = scratch();
  std::string path = dir + "/notes.txt";
  std::ofstream(path) << "shopping list: milk, eggs\n";
  CliRun run = gpuscope(dir, "report " + path);
  EXPECT_EQ(run.exit_code, kExitError);
  EXPECT_THAT(run.err, HasSubstr("gpuscope: error:"));
  EXPECT_THAT(run.err, HasSubstr(path));
  EXPECT_EQ(slurp(path), "shopping list: milk, eggs\n");
}

TEST(CliReportTest, MissingInputIsAUsageError) {
  std::string dir = scratch();
  EXPECT_EQ(gpuscope(dir, "report " + dir + "/nothing.db").exit_code, kExitUsage);
  EXPECT_EQ(gpuscope(dir, "report").exit_code, kExitUsage);
}

TEST(CliReportTest, UnwritableOutputIsAnIoError) {
  std::string dir = scratch();
  CliRun run = gpuscope(dir, "report " + fixtures() + " -o " + dir + "/no/such/dir/r.html");
  EXPECT_EQ(run.exit_code, kExitError);
  EXPECT_THAT(run.err, HasSubstr("cannot write"));
}

}  // namespace
}  // namespace gpuscope
