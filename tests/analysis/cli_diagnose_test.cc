// `gpuscope diagnose` end to end: the real binary on traces recorded on the H100, bad input,
// and `diagnose -- CMD` on a machine without a GPU (the fake NVML, the NVTX test program: no
// kernel is ever recorded, so it must say "no GPU work seen").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"
#include "support/matchers.h"
#include "support/tracing_cli.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using gpuscope::testing::HasAllSubstrs;
using testing::CliRun;
using testing::fresh_tracing_dir;
using ::testing::HasSubstr;
using testing::slurp;
using testing::tracing_gpuscope;

const std::string kSmoke = std::string(GPUSCOPE_TEST_FIXTURES) + "/trace/h100_smoke_window";

// The trace options are trace's own: registered once for both commands (same names, same
// help, same checks).
TEST(CliDiagnose, TakesTracesOptionsWithTheSameHelpAndChecks) {
  const std::string diagnose_help = tracing_gpuscope("diagnose --help").out;
  const std::string trace_help = tracing_gpuscope("trace --help").out;
  for (const std::string option :
       {"--skip-steps", "--skip ", "--steps", "--duration", "--step-range", "--no-shim", "--gpu",
        "--interval", "--max-events"}) {
    const auto line_of = [&](const std::string& help) {
      const std::size_t at = help.find(option);
      if (at == std::string::npos) return std::string("(missing)");
      return help.substr(at, help.find('\n', at) - at);
    };
    EXPECT_NE(line_of(diagnose_help), "(missing)") << option;
    EXPECT_EQ(line_of(diagnose_help), line_of(trace_help)) << option;
  }
  // An empty GPU entry is refused as trace and monitor refuse it, before anything runs.
  EXPECT_EQ(tracing_gpuscope("diagnose --gpu 0, -- true").exit_code, 2);
}

// -o's default, the command's name and the time, is said in the help as trace says its own.
TEST(CliDiagnose, TheOutputHelpNamesTheDefaultFolder) {
  EXPECT_THAT(tracing_gpuscope("diagnose --help").out,
              HasSubstr("Trace folder to create (default: diagnose-YYYYMMDD-HHMMSS)"));
  EXPECT_THAT(tracing_gpuscope("trace --help").out,
              HasSubstr("Run folder to create (default: trace-YYYYMMDD-HHMMSS)"));
}

// A command that cannot start is answered as a shell would, before anything is traced.
TEST(CliDiagnose, ACommandThatCannotStartIsAnsweredAsAShellWould) {
  const std::string dir = fresh_tracing_dir("nocmd");
  CliRun r = tracing_gpuscope("diagnose -o " + dir + " -- /no/such/program");
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gpuscope: error: cannot run /no/such/program"));
  EXPECT_FALSE(fs::exists(dir));
}

TEST(CliDiagnose, ARecordedTraceFolderIsAnalysedAgain) {
  CliRun r = tracing_gpuscope("diagnose " + kSmoke);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasAllSubstrs({"finding: ", "Fix:", "pid 773 (GPU 0): 19 step(s) traced (marks)"}));
}

TEST(CliDiagnose, JsonAloneOnStdout) {
  CliRun r = tracing_gpuscope("diagnose --json " + kSmoke);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "gpuscope.diagnose");
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_FALSE(j["findings"].empty());
  EXPECT_TRUE(j["findings"][0].contains("expected_speedup") ||
              j["findings"][0]["severity"] == "info");
}

TEST(CliDiagnose, HtmlReportAndStore) {
  const std::string dir = fresh_tracing_dir("outputs");
  fs::create_directories(dir);
  CliRun r = tracing_gpuscope("diagnose --md " + dir + "/report.md --store " + dir +
                              "/results.db " + kSmoke);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("diagnosis stored in"));
  const std::string md = slurp(dir + "/report.md");
  EXPECT_THAT(md, HasSubstr("Findings, most gain first"));
  EXPECT_THAT(md, HasSubstr("sync_every_step"));
  CliRun listed = tracing_gpuscope("report --list " + dir + "/results.db");
  EXPECT_THAT(listed.out + listed.err, HasSubstr("diagnose"));
}

TEST(CliDiagnose, BadInputSaysWhatIsWrong) {
  const std::string empty = fresh_tracing_dir("empty");
  fs::create_directories(empty);
  CliRun r = tracing_gpuscope("diagnose " + empty);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("is not a trace folder"));

  r = tracing_gpuscope("diagnose " + empty + "/missing");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no such folder"));

  const std::string damaged = fresh_tracing_dir("damaged");
  fs::create_directories(damaged);
  std::ofstream(damaged + "/gpuscope-trace-7.jsonl") << "garbage\n";
  r = tracing_gpuscope("diagnose " + damaged);
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_THAT(r.err, HasSubstr("gpuscope-trace-7.jsonl: damaged record file"));

  r = tracing_gpuscope("diagnose");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("diagnose needs a command or a trace folder"));

  r = tracing_gpuscope("diagnose python3 train.py");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("put -- before it"));
}

TEST(CliDiagnose, ACommandThatNeverUsesTheGpuGivesNoGpuWorkSeen) {
  const std::string dir = fresh_tracing_dir("no_gpu");
  CliRun r = tracing_gpuscope("diagnose --skip-steps 0 --steps 3 --interval 50 -o " + dir + " -- " +
                              GPUSCOPE_NVTX_APP + " steps 5");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no GPU work seen"));
  EXPECT_TRUE(fs::exists(dir + "/summary.json"));  // the trace is kept
}

TEST(CliDiagnose, TheCommandsExitCodeWinsOverAnEmptyTrace) {
  const std::string dir = fresh_tracing_dir("failing");
  CliRun r = tracing_gpuscope("diagnose -o " + dir + " -- /bin/sh -c 'exit 3'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

}  // namespace
}  // namespace gpuscope
