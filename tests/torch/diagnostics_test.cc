// --trace and --memory-snapshot (diagnostics.h) on the CPU: the trace is a Chrome trace of the
// extra steps only, and every way the files cannot be written is refused before the run starts.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <fstream>

#include "diagnostics.h"
#include "input/files.h"
#include "runner.h"
#include "workload_outcome.h"

namespace gpuscope::workloads {
namespace {

using nlohmann::json;
using testing::Outcome;
using testing::run;

// Not std::filesystem: input/files.h says why.
bool exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

RunConfig tiny_gpt2_training() {
  RunConfig c = testing::tiny_cpu_config(ModelKind::gpt2, Task::train, PrecisionMode::fp32);
  c.batch = 1;
  c.shape.seq_len = 16;
  c.warmup_steps = 1;
  c.steps_per_window = 2;
  return c;
}

// The message of a run refused before it started (exit 2, an invalid_argument error line).
std::string refusal(const Outcome& out) {
  EXPECT_EQ(out.exit_code, kTorchExitUsage);
  EXPECT_EQ(out.find("window"), nullptr);
  const json* error = out.find("error");
  if (error == nullptr) return "(no error line)";
  EXPECT_EQ((*error)["code"], "invalid_argument");
  return (*error)["message"].get<std::string>();
}

class Diagnostics : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "gpuscope_diagnostics_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    remove_tree(dir_);
    ASSERT_EQ(make_directories(dir_), "");
  }
  void TearDown() override { remove_tree(dir_); }
  std::string in_dir(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(Diagnostics, TraceHoldsTheExtraStepsOperatorsAndLeavesTheTimingAlone) {
  RunConfig c = tiny_gpt2_training();
  c.diagnostics.trace_path = in_dir("trace.json");
  c.diagnostics.trace_steps = 2;
  const Outcome out = run(c);
  ASSERT_EQ(out.exit_code, kTorchExitOk) << out.lines.back().dump();
  const json* result = out.find("result");
  ASSERT_NE(result, nullptr);
  EXPECT_EQ((*result)["trace_file"], c.diagnostics.trace_path);
  EXPECT_FALSE(result->contains("diagnostics_problem"));
  // Warm-up and timed steps only: the profiled steps come after and are not in the result.
  EXPECT_EQ((*result)["loss"]["values"].size(), 3u);
  EXPECT_EQ((*result)["step_seconds"]["count"], 2);

  std::ifstream in(c.diagnostics.trace_path);
  const json trace = json::parse(in);
  int linear = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("cat", "") == "cpu_op" && event.value("name", "") == "aten::linear") ++linear;
  }
  // Per step, GPT-2's 12 blocks of four Linear layers and the head; two steps profiled, and
  // none of the warm-up or timed ones.
  EXPECT_EQ(linear, 2 * (12 * 4 + 1));
}

TEST_F(Diagnostics, PlainRunsCarryNoDiagnosticsFields) {
  const Outcome out = run(tiny_gpt2_training());
  ASSERT_EQ(out.exit_code, kTorchExitOk);
  const json* result = out.find("result");
  ASSERT_NE(result, nullptr);
  EXPECT_FALSE(result->contains("trace_file"));
  EXPECT_FALSE(result->contains("memory_snapshot_file"));
}

TEST_F(Diagnostics, UnwritableTracePathIsRefusedBeforeTheRun) {
  RunConfig c = tiny_gpt2_training();
  c.diagnostics.trace_path = in_dir("missing/trace.json");
  EXPECT_NE(refusal(run(c)).find("no folder"), std::string::npos);
}

TEST_F(Diagnostics, TracePathThatIsAFolderIsRefused) {
  RunConfig c = tiny_gpt2_training();
  c.diagnostics.trace_path = dir_;
  EXPECT_NE(refusal(run(c)).find("is a directory"), std::string::npos);
}

TEST_F(Diagnostics, MemorySnapshotNeedsCuda) {
  RunConfig c = tiny_gpt2_training();
  c.diagnostics.memory_snapshot_path = in_dir("memory.pickle");
  EXPECT_NE(refusal(run(c)).find("CUDA caching allocator"), std::string::npos);
  EXPECT_FALSE(exists(c.diagnostics.memory_snapshot_path));
}

TEST_F(Diagnostics, GuardRunsAreNotTraced) {
  RunConfig c = tiny_gpt2_training();
  c.task = Task::guard;
  c.diagnostics.trace_path = in_dir("trace.json");
  const Outcome out = run(c);
  EXPECT_EQ(out.exit_code, kTorchExitUsage);
  ASSERT_NE(out.find("error"), nullptr);
}

TEST(UnwritableReason, AcceptsAWritableFolderAndTheCurrentOne) {
  EXPECT_EQ(unwritable_reason(::testing::TempDir() + "x.json"), std::nullopt);
  EXPECT_EQ(unwritable_reason("relative-name.json"), std::nullopt);
  EXPECT_NE(unwritable_reason("/proc/gpuscope-no/such.json"), std::nullopt);
}

}  // namespace
}  // namespace gpuscope::workloads
