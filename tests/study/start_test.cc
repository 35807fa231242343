// Starting and resuming a study with a scripted `info`: no GPU writes nothing, a new study gets
// its plan and study.json, a resumed one must be of this machine, DIR is never overwritten.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "gpuscope/study.h"
#include "support/cli_run.h"

namespace gpuscope::study {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

json recorded_info() {
  std::ifstream in(std::string(GPUSCOPE_TEST_FIXTURES) + "/info/h100_recorded_2026-11-22.json");
  return json::parse(in);
}

// `info` as scripted: its document, exit code, and whether Ctrl-C came.
class InfoRunner : public StepRunner {
 public:
  json output = recorded_info();
  int exit_code = 0;
  bool interrupted = false;
  int runs = 0;

  ChildEnd run(const Step& step, const StepFiles& files) override {
    ++runs;
    EXPECT_EQ(step.id, "info");
    std::ofstream(files.json) << output.dump();
    std::ofstream(files.log) << "info log\n";
    ChildEnd end;
    end.exit_code = exit_code;
    end.output = output;
    end.interrupted = interrupted;
    return end;
  }
};

class StudyStart : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::test_scratch_dir("study_start")) / "study";  // not made yet
    request_.dir = dir_;
    request_.options.level = Level::quick;
    request_.now_unix_s = 1795341600;
  }
  fs::path dir_;
  StartRequest request_;
  InfoRunner runner_;
};

TEST_F(StudyStart, NewStudyHasItsPlanAndInfoDone) {
  auto state = start_study(request_, runner_);
  ASSERT_TRUE(state.ok()) << state.status().to_string();
  EXPECT_EQ(state->machine.hostname, "vm");
  EXPECT_EQ(state->plan.size(), 4u);
  EXPECT_EQ(state->steps.at("info").status, StepStatus::ok);
  EXPECT_EQ(state->steps.at("info").json_path, "steps/info.json");
  EXPECT_TRUE(fs::exists(dir_ / "steps/info.json"));
  EXPECT_TRUE(fs::exists(dir_ / "steps/info.log"));
  auto saved = load_state(dir_);
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(saved->options.level, Level::quick);
  EXPECT_EQ(saved->started_unix_s, 1795341600);
}

TEST_F(StudyStart, NoDriverWritesNothing) {
  runner_.exit_code = 3;
  runner_.output = {{"kind", "gpuscope.info"},
                    {"schema_version", 1},
                    {"error", {{"code", "no_driver"}, {"message", "no NVIDIA driver found"}}}};
  auto state = start_study(request_, runner_);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.code(), Code::no_driver);
  EXPECT_EQ(state.status().message(), "no NVIDIA driver found");
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(StudyStart, DriverWithoutGpuIsNoDevice) {
  runner_.exit_code = 3;
  runner_.output = {{"kind", "gpuscope.info"},
                    {"error", {{"code", "no_device"}, {"message", "no GPU is visible"}}}};
  EXPECT_EQ(start_study(request_, runner_).code(), Code::no_device);
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(StudyStart, InterruptedInfoIsCancelled) {
  runner_.interrupted = true;
  EXPECT_EQ(start_study(request_, runner_).code(), Code::cancelled);
  EXPECT_FALSE(fs::exists(dir_ / "study.json"));
}

TEST_F(StudyStart, RefusesADirWithOtherFilesUnlessForced) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "mine.txt") << "keep";
  auto refused = start_study(request_, runner_);
  EXPECT_EQ(refused.code(), Code::invalid_argument);
  EXPECT_THAT(refused.status().message(), HasSubstr("--force"));
  EXPECT_EQ(runner_.runs, 0);  // refused before anything ran
  request_.force = true;
  ASSERT_TRUE(start_study(request_, runner_).ok());
  EXPECT_TRUE(fs::exists(dir_ / "mine.txt"));
}

// -o names a folder; a file there is refused, forced or not, and --force is never suggested
// for it (it could not help).
TEST_F(StudyStart, RefusesAFileForItsFolderEvenForced) {
  std::ofstream(dir_) << "a file";
  for (bool force : {false, true}) {
    request_.force = force;
    auto refused = start_study(request_, runner_);
    EXPECT_EQ(refused.code(), Code::invalid_argument);
    EXPECT_THAT(refused.status().message(), HasSubstr("takes a folder"));
    EXPECT_THAT(refused.status().message(), Not(HasSubstr("--force")));
  }
  EXPECT_EQ(runner_.runs, 0);
}

TEST_F(StudyStart, RefusesAnEarlierStudyUnlessResumedOrForced) {
  ASSERT_TRUE(start_study(request_, runner_).ok());
  auto again = start_study(request_, runner_);
  EXPECT_EQ(again.code(), Code::invalid_argument);
  EXPECT_THAT(again.status().message(), HasSubstr("--resume"));
  std::ofstream(dir_ / "steps/stale.json") << "{}";
  request_.force = true;
  ASSERT_TRUE(start_study(request_, runner_).ok());
  EXPECT_FALSE(fs::exists(dir_ / "steps/stale.json"));  // started over
}

TEST_F(StudyStart, ResumeKeepsTheStudysOptionsAndSteps) {
  ASSERT_TRUE(start_study(request_, runner_).ok());
  StartRequest resume;
  resume.dir = dir_;
  resume.resume = true;
  resume.options.level = Level::full;  // ignored: the study's own options count
  auto state = start_study(resume, runner_);
  ASSERT_TRUE(state.ok()) << state.status().to_string();
  EXPECT_EQ(state->options.level, Level::quick);
  EXPECT_TRUE(step_done(*state, "info"));
}

TEST_F(StudyStart, ResumeRefusesAnotherGpu) {
  ASSERT_TRUE(start_study(request_, runner_).ok());
  runner_.output["gpus"][0]["uuid"] = "GPU-another";
  StartRequest resume;
  resume.dir = dir_;
  resume.resume = true;
  auto state = start_study(resume, runner_);
  EXPECT_EQ(state.code(), Code::invalid_argument);
  EXPECT_THAT(state.status().message(), HasSubstr("GPU-another"));
}

TEST_F(StudyStart, ResumeOfNothingIsNotFound) {
  StartRequest resume;
  resume.dir = dir_;
  resume.resume = true;
  EXPECT_EQ(start_study(resume, runner_).code(), Code::not_found);
  EXPECT_EQ(runner_.runs, 0);
}

TEST_F(StudyStart, UnknownGpuIsNotFound) {
  request_.options.gpus = {"3"};
  auto state = start_study(request_, runner_);
  EXPECT_EQ(state.code(), Code::not_found);
  EXPECT_FALSE(fs::exists(dir_ / "study.json"));
}

}  // namespace
}  // namespace gpuscope::study
