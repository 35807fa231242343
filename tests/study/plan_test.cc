// The study's plan: steps per level, GPU selection, time budgets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gpuscope/study.h"
#include "test_gpu.h"

namespace gpuscope::study {
namespace {

using testing::gpu;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

Machine two_gpus() {
  return {"node1",
          {gpu(0, "GPU-aaa", "NVIDIA H100 80GB HBM3"), gpu(1, "GPU-bbb", "NVIDIA H100 80GB HBM3")}};
}

std::vector<std::string> ids(const std::vector<Step>& plan) {
  std::vector<std::string> out;
  for (const Step& s : plan) out.push_back(s.id);
  return out;
}

double total_estimate(const std::vector<Step>& plan) {
  double total = 0;
  for (const Step& s : plan) total += s.skip_reason ? 0 : s.estimate_seconds;
  return total;
}

double total_timeout(const std::vector<Step>& plan) {
  double total = 0;
  for (const Step& s : plan) total += s.skip_reason ? 0 : s.timeout_seconds;
  return total;
}

TEST(StudyPlan, InfoThenBurnBenchSweepPerGpu) {
  auto plan = build_plan({}, two_gpus());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_THAT(ids(*plan), ElementsAre("info", "burn-gpu0", "bench-gpu0", "sweep-gpu0", "burn-gpu1",
                                      "bench-gpu1", "sweep-gpu1"));
  EXPECT_THAT((*plan)[0].args, ElementsAre("info", "--json"));
  EXPECT_FALSE((*plan)[0].gpu.has_value());
  EXPECT_EQ((*plan)[4].gpu, 1);
}

// Without --allow-power-changes the sweep step is planned skipped and says exactly what it would
// run and how to allow it.
TEST(StudyPlan, WithoutAllowingPowerChangesTheSweepSaysWhatItWouldDo) {
  auto plan = build_plan({}, two_gpus());
  ASSERT_TRUE(plan.ok());
  const Step& sweep = (*plan)[3];
  EXPECT_EQ(sweep.kind, StepKind::sweep);
  ASSERT_TRUE(sweep.skip_reason.has_value());
  const std::string& why = *sweep.skip_reason;
  EXPECT_THAT(why, Not(HasSubstr("not built")));
  EXPECT_THAT(why, HasSubstr("runs only with --allow-power-changes (as root or with "
                             "CAP_SYS_ADMIN"));
  EXPECT_THAT(why, HasSubstr("restored afterwards in every case"));
  EXPECT_THAT(why, HasSubstr("gpuscope sweep --gpu 0 --allow-power-changes --model vit_b16 "
                             "--task train --mode amp_bf16"));
  EXPECT_THAT(why, HasSubstr("--task infer --mode <the fastest inference mode>"));
  EXPECT_TRUE(sweep.args.empty());  // never run
}

// With it: ViT-B/16 AMP bf16 training, then inference in the mode bench found fastest (resolved
// when the step runs), each a sweep of its own with its JSON on stdout and its own store.
TEST(StudyPlan, AllowingPowerChangesRunsTheTrainingAndFastestInferenceSweeps) {
  Options o;
  o.allow_power_changes = true;
  auto plan = build_plan(o, two_gpus());
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(ids(*plan),
              ElementsAre("info", "burn-gpu0", "bench-gpu0", "sweep-gpu0", "sweep-infer-gpu0",
                          "burn-gpu1", "bench-gpu1", "sweep-gpu1", "sweep-infer-gpu1"));
  const Step& train = (*plan)[3];
  EXPECT_FALSE(train.skip_reason.has_value());
  EXPECT_THAT(train.args,
              ElementsAre("sweep", "--gpu", "0", "--allow-power-changes", "--model", "vit_b16",
                          "--task", "train", "--mode", "amp_bf16", "--window", "3", "--warmup", "5",
                          "--json", "-", "--store", "{store}"));
  EXPECT_TRUE(train.json_on_stdout);
  const Step& infer = (*plan)[4];
  EXPECT_EQ(infer.kind, StepKind::sweep);
  EXPECT_THAT(infer.args, ::testing::Contains("{fastest_infer_mode}"));
  EXPECT_GT(infer.timeout_seconds, infer.estimate_seconds);

  o.level = Level::full;
  auto full = build_plan(o, two_gpus());
  ASSERT_TRUE(full.ok());
  const auto sweep =
      std::find_if(full->begin(), full->end(), [](const Step& s) { return s.id == "sweep-gpu0"; });
  ASSERT_NE(sweep, full->end());
  EXPECT_THAT(sweep->args, ElementsAre("sweep", "--gpu", "0", "--allow-power-changes", "--preset",
                                       "seeds", "--json", "-", "--store", "{store}"));
  EXPECT_EQ(std::count_if(full->begin(), full->end(),
                          [](const Step& s) { return s.kind == StepKind::sweep; }),
            2);  // one per GPU
}

TEST(StudyPlan, TheInferenceSweepTakesTheModeBenchFoundFastest) {
  Options o;
  o.allow_power_changes = true;
  State state;
  state.machine = two_gpus();
  state.plan = *build_plan(o, state.machine);
  const Step& infer = state.plan[4];
  const fs::path dir = fs::path(::testing::TempDir()) / ("study_plan_" + std::to_string(getpid()));
  fs::create_directories(dir / "steps");
  // No bench answer yet: the training sweep's mode.
  EXPECT_THAT(resolve_step_args(state, dir, infer), ::testing::Contains("amp_bf16"));
  // The sample study's H100 bench: ViT-B/16 inference is fastest in bf16.
  fs::copy_file(std::string(GPUSCOPE_SAMPLE_SOURCE_DIR) + "/steps/bench-gpu0.json",
                dir / "steps/bench-gpu0.json", fs::copy_options::overwrite_existing);
  StepRecord bench;
  bench.json_path = "steps/bench-gpu0.json";
  state.steps["bench-gpu0"] = bench;
  const auto args = resolve_step_args(state, dir, infer);
  EXPECT_THAT(args, ElementsAre("sweep", "--gpu", "0", "--allow-power-changes", "--model",
                                "vit_b16", "--task", "infer", "--mode", "bf16", "--window", "3",
                                "--warmup", "5", "--json", "-", "--store", "{store}"));
  // Steps without the placeholder run as planned.
  EXPECT_EQ(resolve_step_args(state, dir, state.plan[3]), state.plan[3].args);
}

TEST(StudyPlan, BenchFollowsTheBenchContract) {
  Options quick;
  quick.level = Level::quick;
  auto plan = build_plan(quick, two_gpus());
  ASSERT_TRUE(plan.ok());
  const Step& bench = (*plan)[2];
  EXPECT_THAT(bench.args, ElementsAre("bench", "--preset", "study-quick", "--gpu", "0", "--json",
                                      "{json}", "--store", "{store}", "--guard", "off"));
  EXPECT_FALSE(bench.json_on_stdout);
  auto standard = build_plan({}, two_gpus());
  ASSERT_TRUE(standard.ok());
  EXPECT_EQ((*standard)[2].args[2], "study");
}

// --full adds the sharing step (issue 17): one small-batch training row per model, 1, 2 and 4
// copies time-sliced and under MPS; the quick and default studies do not run it.
TEST(StudyPlan, FullSharesTheGpu) {
  Options full;
  full.level = Level::full;
  Machine one{"node1", {gpu(0, "GPU-aaa", "NVIDIA H100 80GB HBM3")}};
  auto plan = build_plan(full, one);
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(ids(*plan),
              ElementsAre("info", "burn-gpu0", "bench-gpu0", "share-gpu0", "sweep-gpu0"));
  const Step& share = (*plan)[3];
  EXPECT_EQ(share.kind, StepKind::bench);
  EXPECT_THAT(share.args,
              ElementsAre("bench", "--model", "resnet50,vit_b16,gpt2", "--task", "train", "--mode",
                          "amp_bf16", "--batch", "8", "--share", "1,2,4", "--share-mode",
                          "timeslice,mps", "--gpu", "0", "--json", "{json}", "--store", "{store}"));
  EXPECT_FALSE(share.json_on_stdout);
  EXPECT_GE(share.timeout_seconds, share.estimate_seconds);
  auto standard = build_plan({}, one);
  EXPECT_THAT(ids(*standard), ElementsAre("info", "burn-gpu0", "bench-gpu0", "sweep-gpu0"));
}

TEST(StudyPlan, BurnDurationGrowsWithTheLevel) {
  auto burn_duration = [](Level level) {
    Options o;
    o.level = level;
    auto plan = build_plan(o, two_gpus());
    const std::vector<std::string>& args = (*plan)[1].args;
    auto it = std::find(args.begin(), args.end(), "--duration");
    return std::stod(*(it + 1));
  };
  EXPECT_LT(burn_duration(Level::quick), burn_duration(Level::standard));
  EXPECT_LT(burn_duration(Level::standard), burn_duration(Level::full));
  auto plan = build_plan({}, two_gpus());
  EXPECT_THAT((*plan)[1].args, ::testing::Contains("--json"));
  EXPECT_THAT((*plan)[1].args, ::testing::Contains("all"));
}

// One H100: quick under 5 minutes (under 6.5 even when every step runs into its timeout) and the
// default under 15 (issue #6's targets).
TEST(StudyPlan, LevelsFitTheirTimeBudgetsOnOneGpu) {
  Machine one{"node1", {gpu(0, "GPU-aaa", "NVIDIA H100 80GB HBM3")}};
  Options quick;
  quick.level = Level::quick;
  auto q = build_plan(quick, one);
  auto d = build_plan({}, one);
  Options full;
  full.level = Level::full;
  auto f = build_plan(full, one);
  ASSERT_TRUE(q.ok() && d.ok() && f.ok());
  EXPECT_LT(total_estimate(*q), 5 * 60);
  EXPECT_LT(total_timeout(*q), 6.5 * 60);
  EXPECT_LT(total_estimate(*d), 15 * 60);
  EXPECT_LT(total_timeout(*d), 16 * 60);
  EXPECT_GT(total_estimate(*f), total_estimate(*d));
  for (const Step& s : *d) {
    if (!s.skip_reason) {
      EXPECT_GE(s.timeout_seconds, s.estimate_seconds) << s.id;
    }
  }
}

TEST(StudyPlan, ChoosesGpusByIndexOrUuidInNvmlOrder) {
  Options o;
  o.gpus = {"GPU-bbb", "0", "1"};
  auto chosen = choose_gpus(o, two_gpus());
  ASSERT_TRUE(chosen.ok());
  ASSERT_EQ(chosen->size(), 2u);
  EXPECT_EQ((*chosen)[0].gpu_index, 0u);
  EXPECT_EQ((*chosen)[1].gpu_index, 1u);
  o.gpus = {"1"};
  auto plan = build_plan(o, two_gpus());
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(ids(*plan), ElementsAre("info", "burn-gpu1", "bench-gpu1", "sweep-gpu1"));
}

TEST(StudyPlan, AGpuInMigModeIsStudiedOnItsInstances) {
  const nlohmann::json info = nlohmann::json::parse(R"({"kind": "gpuscope.info",
      "host": {"hostname": "node1"},
      "gpus": [{"index": 0, "uuid": "GPU-aaa", "name": "NVIDIA A100-SXM4-40GB",
                "mig": {"current": true, "pending": true, "instances": [
                  {"gpu_instance_id": 1, "compute_instance_id": 0, "profile": "3g.20gb",
                   "name": "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "uuid": "MIG-one", "sm_count": 42},
                  {"gpu_instance_id": 5, "compute_instance_id": 0, "profile": "2g.10gb",
                   "name": "NVIDIA A100-SXM4-40GB MIG 2g.10gb", "uuid": "MIG-two"}]}}]})");
  auto machine = machine_from_info(info);
  ASSERT_TRUE(machine.ok()) << machine.status().to_string();
  ASSERT_EQ(machine->gpus.size(), 3u);
  EXPECT_TRUE(machine->gpus[0].mig_mode);
  EXPECT_EQ(machine->gpus[1].uuid(), "MIG-one");
  EXPECT_EQ(machine->gpus[1].sm_count, 42u);

  Options o;
  auto all = build_plan(o, *machine);
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  EXPECT_THAT(ids(*all),
              ElementsAre("info", "burn-gpu0-mig1-0", "bench-gpu0-mig1-0", "sweep-gpu0-mig1-0",
                          "burn-gpu0-mig5-0", "bench-gpu0-mig5-0", "sweep-gpu0-mig5-0"));
  o.gpus = {"MIG-two"};
  auto one = build_plan(o, *machine);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 4u);
  const Step& burn = (*one)[1];
  EXPECT_EQ(burn.gpu, 0);
  EXPECT_THAT(burn.args, ::testing::Contains("MIG-two"));
  EXPECT_THAT(burn.title, HasSubstr("GPU 0 MIG 2g.10gb (GI 5 CI 0)"));
  EXPECT_THAT((*one)[2].args, ::testing::Contains("MIG-two"));
}

TEST(StudyPlan, UnknownGpuNamesTheGpusThereAre) {
  Options o;
  o.gpus = {"7"};
  auto plan = build_plan(o, two_gpus());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.code(), Code::not_found);
  EXPECT_THAT(plan.status().message(), HasSubstr("--gpu 7"));
  EXPECT_THAT(plan.status().message(), HasSubstr("GPU-bbb"));
}

TEST(StudyPlan, NoGpuIsNoDevice) {
  auto plan = build_plan({}, Machine{"node1", {}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.code(), Code::no_device);
}

TEST(StudyPlan, LevelNames) {
  EXPECT_EQ(*parse_level("quick"), Level::quick);
  EXPECT_EQ(*parse_level("default"), Level::standard);
  EXPECT_EQ(*parse_level("full"), Level::full);
  EXPECT_EQ(parse_level("fast").code(), Code::invalid_argument);
  EXPECT_EQ(level_name(Level::standard), "default");
}

TEST(StudyPlan, MachineFromRecordedInfo) {
  std::ifstream in(std::string(GPUSCOPE_TEST_FIXTURES) + "/info/h100_recorded_2026-11-22.json");
  auto machine = machine_from_info(nlohmann::json::parse(in));
  ASSERT_TRUE(machine.ok()) << machine.status().to_string();
  EXPECT_EQ(machine->hostname, "vm");
  ASSERT_EQ(machine->gpus.size(), 1u);
  EXPECT_EQ(machine->gpus[0].uuid(), "GPU-d57df324-956d-e245-79f7-9af168147882");
  EXPECT_EQ(machine->gpus[0].name, "NVIDIA H100 80GB HBM3");
}

TEST(StudyPlan, MachineFromAnInfoErrorIsADataError) {
  nlohmann::json error = {{"kind", "gpuscope.info"},
                          {"schema_version", 1},
                          {"error", {{"code", "no_driver"}, {"message", "no libnvidia-ml"}}}};
  auto machine = machine_from_info(error);
  ASSERT_FALSE(machine.ok());
  EXPECT_THAT(machine.status().message(), HasSubstr("no libnvidia-ml"));
  EXPECT_FALSE(machine_from_info(nlohmann::json{{"kind", "gpuscope.burn"}}).ok());
}

// Quick runs the bench without its convergence guard (the guard doubles a ResNet-50 training
// row); the default and full studies keep it.
TEST(StudyPlan, OnlyTheQuickBenchLeavesTheGuardOut) {
  Machine one{"node1", {gpu(0, "GPU-aaa", "NVIDIA H100 80GB HBM3")}};
  Options quick;
  quick.level = Level::quick;
  const auto guard_off = [](const std::vector<Step>& plan) {
    for (const Step& s : plan) {
      if (s.kind != StepKind::bench) continue;
      for (std::size_t i = 0; i + 1 < s.args.size(); ++i) {
        if (s.args[i] == "--guard" && s.args[i + 1] == "off") return true;
      }
    }
    return false;
  };
  auto q = build_plan(quick, one);
  auto d = build_plan({}, one);
  ASSERT_TRUE(q.ok() && d.ok());
  EXPECT_TRUE(guard_off(*q));
  EXPECT_FALSE(guard_off(*d));
}

}  // namespace
}  // namespace gpuscope::study
