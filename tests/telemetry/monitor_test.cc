// run_monitor in-process against the fake NVML: a session with sinks, a command whose process
// shows up in the driver's process list (so the summary names the GPU it used), and the
// failures that must stop a session before anything runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/monitor.h"

namespace gpuscope::telemetry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_dir() {
  const std::string dir = ::testing::TempDir() + "/monitor_test";
  std::filesystem::create_directories(dir);
  return dir;
}

class MonitorTest : public gpuscope::testing::FakeNvmlTest {
 protected:
  std::string scenario() {
    return read_text(std::string(GPUSCOPE_TEST_FIXTURES) + "/telemetry/two_gpus.json");
  }
};

TEST_F(MonitorTest, SamplesForADurationIntoEverySink) {
  load_json(scenario());
  auto session = open();
  ASSERT_NE(session, nullptr);
  MonitorOptions o;
  o.sampler.interval = std::chrono::milliseconds(50);
  o.duration_s = 0.6;
  o.csv_path = temp_dir() + "/d.csv";
  o.jsonl_path = temp_dir() + "/d.jsonl";
  std::ostringstream out, err;
  auto result = run_monitor(*session, o, out, err);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_FALSE(result->command.has_value());
  EXPECT_TRUE(result->sink_failures.empty());
  ASSERT_EQ(result->summary.gpus.size(), 2u);
  EXPECT_GE(result->summary.wall_s, 0.6);
  EXPECT_GE(result->summary.sampler.ticks, 8u);
  auto rec = read_recording(*o.jsonl_path);
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  EXPECT_EQ(rec->samples.size(), 2 * result->summary.sampler.ticks);
  EXPECT_TRUE(rec->summary.has_value());
  EXPECT_FALSE(result->summary.command_gpus.has_value());
}

TEST_F(MonitorTest, NamesTheGpusTheCommandActuallyUsed) {
  load_json(scenario());
  auto session = open();
  ASSERT_NE(session, nullptr);
  const std::string pid_file = temp_dir() + "/pid";
  std::filesystem::remove(pid_file);
  MonitorOptions o;
  o.sampler.interval = std::chrono::milliseconds(50);
  o.sampler.slow_interval = std::chrono::milliseconds(100);
  // The command's shell writes its PID, then runs on for a while as a "GPU process".
  o.command = {"/bin/sh", "-c", "echo $$ > " + pid_file + "; sleep 1.2"};
  // Play the driver: once the command runs, GPU 0's process list shows its PID.
  std::thread driver([&] {
    for (int i = 0; i < 200 && !std::filesystem::exists(pid_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::string pid = read_text(pid_file);
    while (!pid.empty() && pid.back() == '\n') pid.pop_back();
    std::string json = scenario();
    json.replace(json.find("4242"), 4, pid);
    // From the moment it is loaded (the fake's clock restarts at 0).
    const std::string idle = R"("processes": [])";
    json.replace(json.find(idle), idle.size(),
                 R"("processes": [{"pid": )" + pid +
                     R"(, "used_memory_bytes": 42949672960, "sm_util": 95, "mem_util": 40}])");
    EXPECT_EQ(0, gpuscope_fake_nvml_load_scenario(json.c_str())) << gpuscope_fake_nvml_last_error();
  });
  std::ostringstream out, err;
  auto result = run_monitor(*session, o, out, err);
  driver.join();
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  ASSERT_TRUE(result->command.has_value());
  EXPECT_EQ(result->command->exit.exit_code, 0);
  ASSERT_TRUE(result->summary.command_gpus.has_value());
  EXPECT_THAT(*result->summary.command_gpus, ElementsAre(0u));
  EXPECT_THAT(result->summary.gpus[0].command_pids, ElementsAre(result->command->pid));
  EXPECT_TRUE(result->summary.gpus[1].command_pids.empty());  // pid 777 is someone else's
  EXPECT_EQ(result->summary.gpus[0].command_memory_peak_bytes, 42949672960.0);

  std::ostringstream text;
  print_summary(*result, text);
  EXPECT_THAT(text.str(), HasSubstr("used by the command"));
  EXPECT_THAT(text.str(), HasSubstr("not used by the command"));
  const nlohmann::json j = summary_to_json(*result);
  EXPECT_EQ(j["command_gpus"], nlohmann::json::array({0}));
  EXPECT_EQ(j["command"]["exit_code"], 0);
}

TEST_F(MonitorTest, FailsBeforeAnythingRuns) {
  load_json(scenario());
  auto session = open();
  ASSERT_NE(session, nullptr);
  const std::string mark = temp_dir() + "/ran";
  std::filesystem::remove(mark);
  std::ostringstream out, err;

  MonitorOptions missing;
  missing.command = {"gpuscope-no-such-command-xyz"};
  EXPECT_EQ(run_monitor(*session, missing, out, err).code(), Code::not_found);

  MonitorOptions unwritable;
  unwritable.csv_path = "/nonexistent-dir/x.csv";
  unwritable.command = {"/bin/touch", mark};
  auto r = run_monitor(*session, unwritable, out, err);
  EXPECT_EQ(r.code(), Code::io_error);
  EXPECT_FALSE(std::filesystem::exists(mark));  // the command never started

  MonitorOptions both;
  both.command = {"/bin/true"};
  both.duration_s = 1;
  EXPECT_EQ(run_monitor(*session, both, out, err).code(), Code::invalid_argument);
}

}  // namespace
}  // namespace gpuscope::telemetry
