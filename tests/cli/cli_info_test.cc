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

namespace gpuscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::CliRun;
using testing::run_captured;
using testing::slurp;

// Runs gpuscope with `args` under `env` (KEY=VALUE ...), capturing both streams.
CliRun gpuscope(const std::string& env, const std::string& args) {
  // CTest runs tests in parallel processes: name the capture files after this test.
  static int call = 0;
  std::string base = ::testing::TempDir() + "/gpuscope_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                     std::to_string(++call);
  return run_captured("env " + env + " CUDA_VISIBLE_DEVICES= " + GPUSCOPE_BIN + " " + args, base);
}

std::string with_fake(const std::string& fixture) {
  return testing::fake_nvml_env("nvml/" + fixture);
}

std::string write_scenario(const std::string& name, const std::string& json) {
  std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << json;
  return path;
}

TEST(CliInfo, NoDriverIsAClearMessageAndExitCode3) {
  CliRun run = gpuscope("GPUSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1", "info");
  EXPECT_EQ(run.exit_code, kExitNoGpu);
  EXPECT_THAT(run.err, HasSubstr("no NVIDIA driver"));
  EXPECT_EQ(run.out, "");
}

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

TEST(CliInfo, DriverNotRunningIsExitCode3) {
  CliRun run = gpuscope(with_fake("no_driver.json"), "info");
  EXPECT_EQ(run.exit_code, kExitNoGpu);
  EXPECT_THAT(run.err, HasSubstr("driver is not running"));
}

TEST(CliInfo, DriverWithoutGpusIsExitCode3) {
  CliRun run = gpuscope(with_fake("no_gpu.json"), "info");
  EXPECT_EQ(run.exit_code, kExitNoGpu);
  EXPECT_THAT(run.err, HasSubstr("lists no GPU"));
}

TEST(CliInfo, PrintsTheGpuAsATable) {
  CliRun run = gpuscope(with_fake("h100_sxm.json"), "info");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasSubstr("GPU 0  NVIDIA H100 80GB HBM3"));
  EXPECT_THAT(run.out, HasSubstr("Power"));
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
  auto store = store::Store::open(db, {.read_only = true, .max_size_bytes = std::nullopt});
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  auto runs = (*store)->list_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  auto loaded = (*store)->load_run(runs->front().id);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->run.kind, "info");
  ASSERT_FALSE(loaded->run.gpus.empty());
  EXPECT_THAT(loaded->run.gpus[0].name, HasSubstr("A100"));
}

TEST(CliInfo, UnknownGpuIsAUsageError) {
  CliRun run = gpuscope(with_fake("h100_sxm.json"), "info --gpu 7");
  EXPECT_EQ(run.exit_code, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("there is no GPU 7"));
  run = gpuscope(with_fake("h100_sxm.json"), "info --gpu GPU-nope");
  EXPECT_EQ(run.exit_code, kExitUsage);
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
  std::string scenario =
      write_scenario("init_no_permission_verbose.json",
                     R"({"init_error": "NVML_ERROR_NO_PERMISSION", "devices": []})");
  std::string env = std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH +
                    " GPUSCOPE_FAKE_NVML_SCENARIO=" + scenario;
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
  std::string scenario = write_scenario(
      "init_no_permission.json", R"({"init_error": "NVML_ERROR_NO_PERMISSION", "devices": []})");
  CliRun run = gpuscope(std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH +
                            " GPUSCOPE_FAKE_NVML_SCENARIO=" + scenario,
                        "info");
  EXPECT_EQ(run.exit_code, kExitPermission);
  EXPECT_THAT(run.err, HasSubstr("Insufficient Permissions"));
}

TEST(CliInfo, RefusedReadingsStillPrintTheRest) {
  CliRun run = gpuscope(with_fake("permission_denied.json"), "info");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Unavailable"));
  EXPECT_THAT(run.out, HasSubstr("permission_denied"));
}

TEST(CliInfo, AGpuThatVanishedIsReportedWithExitCode5AndTheOthersPrinted) {
  std::string scenario = write_scenario("lost_at_start.json", R"({"devices": [
      {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000"},
      {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-bbbbbbbb-0000-0000-0000-000000000000",
       "lost_at_t": 0}]})");
  CliRun run = gpuscope(std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH +
                            " GPUSCOPE_FAKE_NVML_SCENARIO=" + scenario,
                        "info");
  EXPECT_EQ(run.exit_code, kExitGpuLost);
  EXPECT_THAT(run.out, HasSubstr("GPU 0  NVIDIA H100"));
  EXPECT_THAT(run.out, HasSubstr("GPU 1  FAILED"));
  EXPECT_THAT(run.err, HasSubstr("GPU is lost"));
}

}  // namespace
}  // namespace gpuscope
