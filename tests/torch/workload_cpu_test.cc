// A real run on the CPU through the same code the GPU runs: every model, task and precision
// mode the CPU supports does a forward (and backward and AdamW step), at a tiny size.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "device.h"
#include "runner.h"
#include "workload_outcome.h"

namespace gpuscope::workloads {
namespace {

using nlohmann::json;

using testing::Outcome;
using testing::run;

RunConfig tiny(ModelKind model, Task task, PrecisionMode mode) {
  return testing::tiny_cpu_config(model, task, mode);
}

struct Case {
  ModelKind model;
  Task task;
  PrecisionMode mode;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(model_info(info.param.model).name) + "_" +
         std::string(task_name(info.param.task)) + "_" +
         std::string(precision_mode_name(info.param.mode));
}

class CpuWorkload : public ::testing::TestWithParam<Case> {};

TEST_P(CpuWorkload, RunsOrSaysWhyNot) {
  const Case c = GetParam();
  const Outcome out = run(tiny(c.model, c.task, c.mode));
  for (const auto& line : out.lines) EXPECT_EQ(line["v"], 1);
  ASSERT_NE(out.find("start"), nullptr);

  const auto cpu = std::get<DeviceInfo>(open_device("cpu"));
  const bool fp16 = c.mode == PrecisionMode::fp16 || c.mode == PrecisionMode::amp_fp16;
  const bool cpu_can = c.mode != PrecisionMode::tf32 && (!fp16 || cpu.cpu_native_fp16) &&
                       !(c.mode == PrecisionMode::fp8 && c.model == ModelKind::resnet50);
  if (!cpu_can) {
    EXPECT_EQ(out.exit_code, kTorchExitSkipped);
    const json* skipped = out.find("skipped");
    ASSERT_NE(skipped, nullptr);
    EXPECT_EQ((*skipped)["code"], "not_supported");
    EXPECT_FALSE((*skipped)["reason"].get<std::string>().empty());
    return;
  }
  ASSERT_EQ(out.exit_code, kTorchExitOk) << out.lines.back().dump();
  const json* result = out.find("result");
  ASSERT_NE(result, nullptr);
  EXPECT_GT((*result)["samples_per_second"].get<double>(), 0);
  EXPECT_EQ((*result)["step_seconds"]["count"], 1);
  if (c.task == Task::train) {
    const auto& losses = (*result)["loss"]["values"];
    ASSERT_EQ(losses.size(), 1u);
    for (const auto& loss : losses) {
      ASSERT_FALSE(loss.is_null()) << "non-finite loss";
      EXPECT_GT(loss.get<double>(), 0);
      EXPECT_LT(loss.get<double>(), 30);
    }
  } else {
    EXPECT_TRUE((*result)["loss"].is_null());
    ASSERT_FALSE((*result)["output_mean_abs"].is_null()) << "non-finite logits";
    EXPECT_GT((*result)["output_mean_abs"].get<double>(), 0);
  }
  EXPECT_EQ(c.mode == PrecisionMode::amp_fp16 && c.task == Task::train,
            !(*result)["loss_scale"].is_null());
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& model : model_catalogue()) {
    for (const Task task : {Task::train, Task::infer}) {
      for (const auto& mode : precision_modes()) cases.push_back({model.kind, task, mode.mode});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllModes, CpuWorkload, ::testing::ValuesIn(all_cases()), case_name);

TEST(CpuWorkloadErrors, UnknownDeviceIsAUsageError) {
  RunConfig c = tiny(ModelKind::gpt2, Task::infer, PrecisionMode::fp32);
  c.device = "tpu";
  const Outcome out = run(c);
  EXPECT_EQ(out.exit_code, kTorchExitUsage);
  ASSERT_NE(out.find("error"), nullptr);
}

TEST(CpuWorkloadErrors, LibTorchAdamWCannotBeCapturedButRunsEagerly) {
  RunConfig c = tiny(ModelKind::resnet50, Task::train, PrecisionMode::fp32);
  c.fused_adamw = false;
  const Outcome out = run(c);  // the CPU never captures graphs
  EXPECT_EQ(out.exit_code, kTorchExitOk);
}

// --windows 0 (gpuscope sweep's workload): windows go on past any count until the stop flag,
// each a `window` line with samples_per_second, and the stop is a normal end.
TEST(CpuWorkloadUntilStopped, PrintsWindowsUntilStoppedAndEndsCleanly) {
  RunConfig c = tiny(ModelKind::gpt2, Task::train, PrecisionMode::fp32);
  c.windows = 0;
  std::atomic<bool> stop{false};
  std::vector<json> lines;
  int windows = 0;
  const int exit_code = run_workload(
      c,
      [&](const std::string& line) {
        lines.push_back(json::parse(line));
        if (lines.back()["type"] == "window" && ++windows == 7) stop = true;
      },
      &stop);
  EXPECT_EQ(exit_code, kTorchExitOk);
  EXPECT_EQ(windows, 7);  // more than the default 5: the count is not the end
  for (const json& line : lines) {
    if (line["type"] != "window") continue;
    EXPECT_GT(line["samples_per_second"].get<double>(), 0) << line;
  }
  ASSERT_EQ(lines.back()["type"], "result");
  EXPECT_FALSE(lines.back()["partial"].get<bool>());
}

TEST(CpuWorkloadUntilStopped, HasNoEndToTraceAfter) {
  RunConfig c = tiny(ModelKind::gpt2, Task::train, PrecisionMode::fp32);
  c.windows = 0;
  c.diagnostics.trace_path = "/tmp/gpuscope-until-stopped-trace.json";
  const Outcome out = run(c);
  EXPECT_EQ(out.exit_code, kTorchExitUsage);
  ASSERT_NE(out.find("error"), nullptr);
}

}  // namespace
}  // namespace gpuscope::workloads
