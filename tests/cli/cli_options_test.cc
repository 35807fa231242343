// The option rules every command shares (gpuscope/option_checks.h), end to end: durations and
// intervals are finite, more than 0 and at most a sane maximum, said in readable units; an empty
// --gpu is an error everywhere. Each case would otherwise run forever, run on every GPU, or print
// a 309-digit limit. The real binary, NVML replaced by the fake library.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gpuscope/exit_codes.h"
#include "support/cli_run.h"

namespace gpuscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::CliRun;

// `gpuscope ARGS` with the fake NVML, stopped after 10 s (exit 124) should it run on.
CliRun gpuscope(const std::string& args) {
  const std::string env = testing::fake_nvml_env("telemetry/two_gpus.json") +
                          " GPUSCOPE_BURN_WORKER=/nonexistent/worker";
  return testing::run_in(testing::scratch_dir("cli_options_test"),
                         "env " + env + " timeout 10 " + GPUSCOPE_BIN + " " + args);
}

TEST(CliOptions, DurationsThatWouldNeverEndAreRefused) {
  // monitor --duration -1, 0 and nan used to be accepted and sample until interrupted.
  for (const char* bad : {"-1", "0", "nan", "inf", "-inf", "1e400", "2592001"}) {
    CliRun run = gpuscope(std::string("monitor --no-tui --duration ") + bad);
    EXPECT_EQ(run.exit_code, kExitUsage) << bad << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("--duration: must be more than 0 and at most 30 days")) << bad;
  }
  CliRun words = gpuscope("monitor --no-tui --duration soon");
  EXPECT_EQ(words.exit_code, kExitUsage);
  EXPECT_THAT(words.err, HasSubstr("must be a number of seconds (got 'soon')"));
}

TEST(CliOptions, EveryCommandAppliesTheSameDurationRuleInReadableUnits) {
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"burn --duration 0", "--duration: must be more than 0 and at most 30 days (got 0 s)"},
      {"burn --duration nan", "--duration: must be more than 0"},
      // Hidden options (tests and debugging): CLI11 leaves their name out of the message.
      {"burn --sample-interval -1", "must be more than 0 and at most 30 days (got -1 s)"},
      {"burn --worker-timeout nan", "must be more than 0 and at most 30 days (got nan)"},
      {"bench --preset seeds --row-timeout 0", "--row-timeout: must be more than 0"},
      {"bench --preset seeds --interval 5",
       "--interval: must be at least 20 ms and at most 10 s (got 5 ms)"},
      {"monitor --interval 5", "--interval: must be at least 20 ms and at most 1 h (got 5 ms)"},
  };
  for (const Case& c : cases) {
    CliRun run = gpuscope(c.args);
    EXPECT_EQ(run.exit_code, kExitUsage) << c.args << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr(c.message)) << c.args;
    // burn --duration 0 printed DBL_MAX, all 309 digits, as the limit.
    EXPECT_THAT(run.err, Not(HasSubstr("1797693134862315"))) << c.args;
  }
}

TEST(CliOptions, AnEmptyGpuSelectorIsAnErrorForEveryCommand) {
  // info and burn took --gpu '' as "every GPU", monitor and study as a GPU that does not exist.
  const std::string dir = testing::scratch_dir("cli_options_test");
  for (const std::string& args : std::vector<std::string>{"info --gpu ''", "burn --gpu ''",
                                                          "monitor --no-tui --duration 1 --gpu ''",
                                                          "study --gpu '' -o " + dir + "/study"}) {
    CliRun run = gpuscope(args);
    EXPECT_EQ(run.exit_code, kExitUsage) << args << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("--gpu: an empty GPU selector; omit --gpu to use every GPU"))
        << args;
    EXPECT_EQ(run.out, "") << args;
  }
}

TEST(CliOptions, AnEmptyEntryInAGpuListIsAnErrorForEveryCommand) {
  // CLI11 dropped the empty entry of "--gpu 0," silently: monitor sampled GPU 0 as if asked.
  const std::string dir = testing::scratch_dir("cli_options_test");
  for (const std::string& args : std::vector<std::string>{
           "info --gpu 0,", "burn --gpu 0,", "monitor --no-tui --duration 1 --gpu 0,",
           "monitor --no-tui --duration 1 --gpu ,0", "study --gpu 0, -o " + dir + "/study2",
           "bench --preset seeds --gpu 0,"}) {
    CliRun run = gpuscope(args);
    EXPECT_EQ(run.exit_code, kExitUsage) << args << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("--gpu: an empty entry in the GPU list")) << args;
    EXPECT_EQ(run.out, "") << args;
  }
}

}  // namespace
}  // namespace gpuscope
