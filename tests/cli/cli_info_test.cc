// `gpuscope info` end to end: the real binary, NVML replaced by the fake library through
// GPUSCOPE_NVML_LIBRARY, checked on exit codes, stdout and stderr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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

using testing::CliRun;
using testing::slurp;

// Runs gpuscope with `args` under `env` (KEY=VALUE ...), capturing both streams.
CliRun gpuscope(const std::string& env, const std::string& args) {
  return testing::run_gpuscope(::testing::TempDir(), env + " CUDA_VISIBLE_DEVICES=", args);
}

std::string with_fake(const std::string& fixture) {
  return testing::fake_nvml_env("nvml/" + fixture);
}

CliRun on_an_h100(const std::string& args) {
  return gpuscope(with_fake("h100_sxm.json"), args);
}

// The environment that has the fake NVML play `json`, written to a file `name` for it.
std::string with_scenario(const std::string& name, const std::string& json) {
  const std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << json;
  return std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH +
         " GPUSCOPE_FAKE_NVML_SCENARIO=" + path;
}

// A machine where no GPU can be used: exit code 3, the reason on stderr, nothing on stdout.
struct NoGpu {
  std::string name;
  std::string env;
  std::string says;
};

void PrintTo(const NoGpu& machine, std::ostream* os) {
  *os << machine.name;
}

class CliInfoNoGpu : public ::testing::TestWithParam<NoGpu> {};

TEST_P(CliInfoNoGpu, IsExitCode3WithTheReason) {
  CliRun run = gpuscope(GetParam().env, "info");
  EXPECT_EQ(run.exit_code, kExitNoGpu);
  EXPECT_THAT(run.err, HasSubstr(GetParam().says));
  EXPECT_EQ(run.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    Machines, CliInfoNoGpu,
    ::testing::Values(NoGpu{"NoDriver", "GPUSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1",
                            "no NVIDIA driver"},
                      NoGpu{"DriverNotRunning", with_fake("no_driver.json"),
                            "driver is not running"},
                      NoGpu{"DriverWithoutGpus", with_fake("no_gpu.json"), "lists no GPU"}),
    [](const auto& test) { return test.param.name; });

TEST(CliInfo, NoDriverAsJsonIsStillJson) {
  CliRun run = gpuscope("GPUSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1", "info --json");
  EXPECT_EQ(run.exit_code, kExitNoGpu);
  auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["error"]["code"], "no_driver");
}

// On this machine itself (no GPU in CI): the default library search must end the same way.
TEST(CliInfo, ThisMachineWithoutADriverSaysSo) {
  CliRun run = gpuscope("-u GPUSCOPE_NVML_LIBRARY", "info");
  if (run.exit_code == kExitOk) GTEST_SKIP() << "this machine has an NVIDIA driver and GPU";
  EXPECT_EQ(run.exit_code, kExitNoGpu) << run.err;
  EXPECT_THAT(run.err, HasSubstr("gpuscope: error:"));
}

TEST(CliInfo, PrintsTheGpuAsATable) {
  CliRun run = gpuscope(with_fake("h100_sxm.json"), "info");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasAllSubstrs({"GPU 0  NVIDIA H100 80GB HBM3", "Power"}));
}

TEST(CliInfo, JsonHasTheSchemaVersionAndTheGpu) {
  CliRun run = gpuscope(with_fake("a100_mig.json"), "info --json");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["gpus"][0]["mig"]["instances"].size(), 3u);
}

TEST(CliInfo, StoreRecordsTheMachine) {
  const std::string db = ::testing::TempDir() + "/" + std::to_string(getpid()) + "_info.db";
  std::remove(db.c_str());
  CliRun run = gpuscope(with_fake("a100_mig.json"), "info --store " + db);
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.err, HasSubstr("gpuscope: info run 1 written to " + db));
  const auto runs = testing::stored_runs(db);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run.kind, "info");
  ASSERT_FALSE(runs[0].run.gpus.empty());
  EXPECT_THAT(runs[0].run.gpus[0].name, HasSubstr("A100"));
}

TEST(CliInfo, UnknownGpuIsAUsageError) {
  testing::expect_refused(on_an_h100, kExitUsage,
                          {{"info --gpu 7", "there is no GPU 7"}, {"info --gpu GPU-nope", ""}});
}

TEST(CliInfo, BadArgumentsAreAUsageError) {
  CliRun run = gpuscope(with_fake("h100_sxm.json"), "info --bogus");
  EXPECT_EQ(run.exit_code, kExitUsage);
  run = gpuscope("", "");
  EXPECT_EQ(run.exit_code, kExitUsage);
}

TEST(Cli, AnUnknownCommandOrOptionIsNamed) {
  CliRun run = gpuscope("", "nosuchcmd");
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("unknown command 'nosuchcmd'"));
  EXPECT_THAT(run.err, HasSubstr("info, bench, burn, monitor, report, study"));
  EXPECT_THAT(run.err, Not(HasSubstr("A subcommand is required")));
  run = gpuscope(with_fake("h100_sxm.json"), "info --bogus");
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("--bogus"));
  run = gpuscope(with_fake("h100_sxm.json"), "--verbose info --bogus");
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("--bogus"));
}

// What a user reads is the driver's answer; the call and source line that failed are shown with
// --verbose (before or after the command) or GPUSCOPE_VERBOSE=1.
TEST(Cli, VerboseAddsWhereAnErrorCameFrom) {
  const std::string env =
      with_scenario("init_no_permission_verbose.json",
                    R"({"init_error": "NVML_ERROR_NO_PERMISSION", "devices": []})");
  CliRun plain = gpuscope(env, "info");
  EXPECT_EQ(plain.exit_code, kExitPermission);
  EXPECT_THAT(plain.err, HasSubstr("Insufficient Permissions"));
  EXPECT_THAT(plain.err, Not(HasSubstr("nvml_session.cc")));
  EXPECT_THAT(plain.err, Not(HasSubstr("nvmlInit_v2(")));
  for (const auto& [vars, args] : {std::pair<std::string, std::string>{env, "--verbose info"},
                                   {env, "info --verbose"},
                                   {env + " GPUSCOPE_VERBOSE=1", "info"}}) {
    CliRun verbose = gpuscope(vars, args);
    EXPECT_EQ(verbose.exit_code, kExitPermission) << args;
    EXPECT_THAT(verbose.err, HasSubstr("Insufficient Permissions")) << args;
    EXPECT_THAT(verbose.err, HasSubstr("nvml_session.cc:")) << args;
    EXPECT_THAT(verbose.err, HasSubstr("nvmlInit_v2")) << args;
  }
}

TEST(CliInfo, PermissionRefusedAtInitIsExitCode4) {
  CliRun run =
      gpuscope(with_scenario("init_no_permission.json",
                             R"({"init_error": "NVML_ERROR_NO_PERMISSION", "devices": []})"),
               "info");
  EXPECT_EQ(run.exit_code, kExitPermission);
  EXPECT_THAT(run.err, HasSubstr("Insufficient Permissions"));
}

TEST(CliInfo, RefusedReadingsStillPrintTheRest) {
  CliRun run = gpuscope(with_fake("permission_denied.json"), "info");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasAllSubstrs({"Unavailable", "permission_denied"}));
}

TEST(CliInfo, AGpuThatVanishedIsReportedWithExitCode5AndTheOthersPrinted) {
  const std::string env = with_scenario("lost_at_start.json", R"({"devices": [
      {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000"},
      {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-bbbbbbbb-0000-0000-0000-000000000000",
       "lost_at_t": 0}]})");
  CliRun run = gpuscope(env, "info");
  EXPECT_EQ(run.exit_code, kExitGpuLost);
  EXPECT_THAT(run.out, HasSubstr("GPU 0  NVIDIA H100"));
  EXPECT_THAT(run.out, HasSubstr("GPU 1  FAILED"));
  EXPECT_THAT(run.err, HasSubstr("GPU is lost"));
}

}  // namespace
}  // namespace gpuscope
