// The workloads a sweep runs for a bench row and a burn GEMM: one process until stopped, on the
// one swept GPU, labelled and tagged so that each mode is a curve of its own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/bench.h"
#include "gpuscope/sweep.h"

namespace gpuscope::sweep {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Pair;

TEST(RowWorkload, RunsGpuscopeTorchUntilStoppedOnTheSweptGpu) {
  bench::RowSpec row;
  row.model = "vit_b16";
  row.task = "train";
  row.mode = "amp_bf16";
  row.batch = "64";
  row.windows = 3;  // a preset's timing: the sweep's --windows 0 comes after it and wins
  const WorkloadSpec w = row_workload(row, "/opt/gpuscope-torch", "GPU-abc");
  EXPECT_EQ(w.label, "vit_b16 train amp_bf16 batch=64");
  ASSERT_GE(w.command.size(), 4u);
  EXPECT_EQ(w.command.front(), "/opt/gpuscope-torch");
  EXPECT_THAT(std::vector<std::string>(w.command.end() - 3, w.command.end()),
              ElementsAre("--windows", "0", "--quiet"));
  EXPECT_THAT(w.env, Contains(Pair("CUDA_VISIBLE_DEVICES", "GPU-abc")));
  EXPECT_THAT(w.env, Contains(Pair("CUDA_DEVICE_ORDER", "PCI_BUS_ID")));
  EXPECT_EQ(w.unit, "samples/s");
  EXPECT_EQ(w.rate_line_type, "window");
  EXPECT_EQ(w.tags,
            (nlohmann::json{
                {"model", "vit_b16"}, {"task", "train"}, {"mode", "amp_bf16"}, {"batch", "64"}}));
}

TEST(BurnWorkload, ReadsTheWorkersGemmWindowsInTeraOpsPerSecond) {
  const WorkloadSpec fp16 = burn_workload(Precision::fp16, "/opt/worker", "0");
  EXPECT_EQ(fp16.label, "fp16 GEMM");
  EXPECT_THAT(fp16.command, ElementsAre("/opt/worker", "--precision", "fp16", "--duration", "86400",
                                        "--window", "1"));
  EXPECT_EQ(fp16.unit, "TFLOP/s");
  EXPECT_EQ(fp16.rate_line_type, "gemm_window");
  EXPECT_EQ(fp16.rate_key, "tflops");
  EXPECT_EQ(fp16.tags, (nlohmann::json{{"precision", "fp16"}}));
  EXPECT_EQ(burn_workload(Precision::int8, "/opt/worker", "0").unit, "TOP/s");
}

}  // namespace
}  // namespace gpuscope::sweep
