// study.json: round trip, atomic saves, schema versions, the machine check, the output directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "gpuscope/study.h"
#include "test_gpu.h"

namespace gpuscope::study {
namespace {

using testing::gpu;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path fresh_dir(const std::string& name) {
  fs::path dir =
      fs::path(::testing::TempDir()) / ("study_state_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir;
}

State sample_state() {
  State state;
  state.gpuscope_version = "0.1.0";
  state.started_unix_s = 1795341600;
  state.command_line = "gpuscope study --quick";
  state.options.level = Level::quick;
  state.options.gpus = {"0"};
  state.machine = {"node1", {gpu(0, "GPU-aaa", "NVIDIA H100 80GB HBM3")}};
  state.plan = *build_plan(state.options, state.machine);
  StepRecord info;
  info.status = StepStatus::ok;
  info.exit_code = 0;
  info.duration_seconds = 1.5;
  info.json_path = "steps/info.json";
  state.steps["info"] = info;
  StepRecord burn;
  burn.status = StepStatus::failed;
  burn.term_signal = 11;
  burn.message = "crashed";
  state.steps["burn-gpu0"] = burn;
  return state;
}

TEST(StudyState, RoundTripsThroughJson) {
  State state = sample_state();
  auto back = state_from_json(state_to_json(state));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(state_to_json(*back), state_to_json(state));
  EXPECT_EQ(back->options.level, Level::quick);
  EXPECT_EQ(back->plan.size(), state.plan.size());
  EXPECT_EQ(back->plan[2].args, state.plan[2].args);
  EXPECT_EQ(back->plan[3].skip_reason, state.plan[3].skip_reason);
  EXPECT_EQ(back->steps.at("burn-gpu0").term_signal, 11);
  EXPECT_FALSE(back->steps.at("burn-gpu0").exit_code.has_value());
}

TEST(StudyState, SchemaVersionIsPinned) {
  nlohmann::json j = state_to_json(sample_state());
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["kind"], "gpuscope.study.state");
  for (const char* key : {"options", "machine", "plan", "steps", "started_unix_s"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
}

TEST(StudyState, NewerSchemaIsRefusedClearly) {
  nlohmann::json j = state_to_json(sample_state());
  j["schema_version"] = kStateSchemaVersion + 1;
  auto state = state_from_json(j);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.code(), Code::data_error);
  EXPECT_THAT(state.status().message(), HasSubstr("newer"));
}

TEST(StudyState, MalformedStateIsADataError) {
  nlohmann::json j = state_to_json(sample_state());
  j.erase("plan");
  EXPECT_EQ(state_from_json(j).code(), Code::data_error);
  EXPECT_EQ(state_from_json(nlohmann::json{{"kind", "gpuscope.burn"}}).code(), Code::data_error);
}

TEST(StudyState, SavesAtomicallyAndLoads) {
  fs::path dir = fresh_dir("save");
  fs::create_directories(dir);
  State state = sample_state();
  ASSERT_TRUE(save_state(dir, state).ok());
  state.steps["burn-gpu0"].message = "changed";
  ASSERT_TRUE(save_state(dir, state).ok());
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "study.json");  // no temporary file left behind
  }
  EXPECT_EQ(files, 1);
  auto loaded = load_state(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->steps.at("burn-gpu0").message, "changed");
}

// The temporary name used before, .study.json.tmp.PID, was opened through whatever was there.
TEST(StudyState, SavingNeverWritesThroughASymlinkAtATemporaryName) {
  fs::path dir = fresh_dir("symlink");
  fs::create_directories(dir);
  std::ofstream(dir / "victim") << "precious";
  fs::create_symlink(dir / "victim", dir / (".study.json.tmp." + std::to_string(getpid())));
  ASSERT_TRUE(save_state(dir, sample_state()).ok());
  std::ifstream victim(dir / "victim");
  std::string text((std::istreambuf_iterator<char>(victim)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious");
  EXPECT_TRUE(load_state(dir).ok());
}

TEST(StudyState, SaveIntoAMissingDirectoryIsAnIoError) {
  EXPECT_EQ(save_state(fresh_dir("missing") / "deeper", sample_state()).code(), Code::io_error);
}

TEST(StudyState, LoadingWithoutAStudyIsNotFound) {
  fs::path dir = fresh_dir("empty");
  fs::create_directories(dir);
  auto loaded = load_state(dir);
  EXPECT_EQ(loaded.code(), Code::not_found);
  EXPECT_THAT(loaded.status().message(), HasSubstr("not a study"));
  std::ofstream(dir / "study.json") << "{ not json";
  EXPECT_EQ(load_state(dir).code(), Code::data_error);
}

TEST(StudyState, StepDoneMeansEndedButNotInterrupted) {
  State state = sample_state();
  EXPECT_TRUE(step_done(state, "info"));
  EXPECT_TRUE(step_done(state, "burn-gpu0"));  // failed is done: not redone on resume
  EXPECT_FALSE(step_done(state, "bench-gpu0"));
  state.steps["bench-gpu0"].status = StepStatus::interrupted;
  EXPECT_FALSE(step_done(state, "bench-gpu0"));
}

TEST(StudyState, SameMachineIsAccepted) {
  State state = sample_state();
  Machine now = state.machine;
  now.gpus.push_back(gpu(1, "GPU-new", "another GPU the study does not use"));
  EXPECT_TRUE(check_same_machine(state, now).ok());
}

TEST(StudyState, AnotherHostIsRefused) {
  State state = sample_state();
  Machine now = state.machine;
  now.hostname = "node2";
  Status s = check_same_machine(state, now);
  EXPECT_EQ(s.code(), Code::invalid_argument);
  EXPECT_THAT(s.message(), HasSubstr("node1"));
  EXPECT_THAT(s.message(), HasSubstr("node2"));
}

TEST(StudyState, AnotherGpuIsRefused) {
  State state = sample_state();
  Machine now = state.machine;
  now.gpus[0].gpu_uuid = "GPU-zzz";
  Status s = check_same_machine(state, now);
  EXPECT_EQ(s.code(), Code::invalid_argument);
  EXPECT_THAT(s.message(), HasSubstr("GPU-aaa"));
  EXPECT_THAT(s.message(), HasSubstr("GPU-zzz"));
  now.gpus.clear();
  EXPECT_THAT(check_same_machine(state, now).message(), HasSubstr("no such GPU"));
}

TEST(StudyState, ClassifiesTheOutputDirectory) {
  fs::path dir = fresh_dir("classify");
  EXPECT_EQ(classify_dir(dir), DirKind::absent_or_empty);
  fs::create_directories(dir);
  EXPECT_EQ(classify_dir(dir), DirKind::absent_or_empty);
  std::ofstream(dir / "notes.txt") << "mine";
  EXPECT_EQ(classify_dir(dir), DirKind::other);
  ASSERT_TRUE(save_state(dir, sample_state()).ok());
  EXPECT_EQ(classify_dir(dir), DirKind::study);
  EXPECT_EQ(classify_dir(dir / "notes.txt"), DirKind::not_a_folder);
  EXPECT_EQ(require_folder(dir / "notes.txt", "-o").code(), Code::invalid_argument);
  EXPECT_THAT(require_folder(dir / "notes.txt", "-o").message(), HasSubstr("takes a folder"));
  EXPECT_TRUE(require_folder(dir, "-o").ok());
}

}  // namespace
}  // namespace gpuscope::study
