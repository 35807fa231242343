// Which workers burn starts: targets from `info` records (whole GPUs, MIG instances), --gpu,
// the worker's arguments and where the worker program is found.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/burn.h"
#include "gpuscope/info.h"

namespace gpuscope::burn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class BurnPlan : public gpuscope::testing::FakeNvmlTest {
 protected:
  SystemInfo collect(const std::string& scenario, const std::string& gpu = "") {
    load(scenario);
    session_ = open();
    auto info = collect_info(*session_, CudaInventory{}, InfoOptions{gpu});
    EXPECT_TRUE(info.ok()) << info.status().to_string();
    return info.ok() ? *info : SystemInfo{};
  }
  std::unique_ptr<nvml::Session> session_;
};

TEST_F(BurnPlan, OneTargetPerGpuNamedByUuid) {
  const SystemInfo info = collect("h100_sxm.json");
  auto p = plan(info, "");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->targets.size(), 1u);
  const Target& t = p->targets[0];
  EXPECT_EQ(t.label(), "GPU 0");
  EXPECT_EQ(t.gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.uuid(), "GPU-3f6b2c1d-8a4e-4f1b-9c2d-5e7a8b9c0d1e");
  EXPECT_FALSE(t.mig);
  ASSERT_TRUE(t.peak);
  EXPECT_EQ(t.peak->model, "H100 SXM5 80GB");
  EXPECT_TRUE(t.gpm_supported);
  EXPECT_TRUE(t.energy_counter);
}

TEST_F(BurnPlan, OneTargetPerMigInstanceWithItsUuid) {
  const SystemInfo info = collect("a100_mig.json");
  auto p = plan(info, "");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->targets.size(), 3u);
  std::vector<std::string> labels, visible;
  for (const Target& t : p->targets) {
    labels.push_back(t.label());
    visible.push_back(t.uuid());
    ASSERT_TRUE(t.mig);
    EXPECT_EQ(t.uuid(), t.mig->uuid);
    EXPECT_EQ(t.gpu_index, 0u);
  }
  EXPECT_THAT(labels, ElementsAre("GPU 0 MIG 3g.20gb (GI 1 CI 0)", "GPU 0 MIG 2g.10gb (GI 5 CI 0)",
                                  "GPU 0 MIG 1g.5gb (GI 13 CI 0)"));
  EXPECT_THAT(visible, ElementsAre("MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9",
                                   "MIG-2a3b4c5d-6e7f-5a8b-9c0d-1e2f3a4b5c6d",
                                   "MIG-3c4d5e6f-7a8b-5c9d-0e1f-2a3b4c5d6e7f"));
  EXPECT_EQ(p->targets[0].sm_count, 42u);
  // Without the GPU's SM count (CUDA sees no device here) there is no share of the peak.
  EXPECT_FALSE(p->targets[0].peak);
  EXPECT_THAT(p->targets[0].peak_note, HasSubstr("no peak"));
}

TEST_F(BurnPlan, AMigInstanceGetsItsShareOfTheComputePeak) {
  SystemInfo info = collect("a100_mig.json");
  info.gpus[0].sm_count = 108;
  auto p = plan(info, "");
  ASSERT_TRUE(p.ok());
  const Target& t = p->targets[0];  // 3g.20gb, 42 SMs
  ASSERT_TRUE(t.peak);
  ASSERT_TRUE(info.gpus[0].peak);
  EXPECT_DOUBLE_EQ(*peak_flops(*t.peak, Precision::bf16),
                   *peak_flops(*info.gpus[0].peak, Precision::bf16) * 42 / 108);
  EXPECT_FALSE(t.peak->memory_bandwidth_bytes_per_s);
  EXPECT_EQ(t.peak_note, "the GPU's peak x 42/108 SMs");
}

TEST_F(BurnPlan, SelectsOneMigInstanceByUuid) {
  const std::string uuid = "MIG-2a3b4c5d-6e7f-5a8b-9c0d-1e2f3a4b5c6d";
  const SystemInfo info = collect("a100_mig.json", uuid);
  auto p = plan(info, uuid);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->targets.size(), 1u);
  EXPECT_EQ(p->targets[0].mig->profile, "2g.10gb");
  EXPECT_EQ(plan(info, "MIG-nope").code(), Code::not_found);
}

TEST_F(BurnPlan, MigModeWithoutInstancesIsNoDevice) {
  SystemInfo info = collect("a100_mig.json");
  info.gpus[0].mig_instances.clear();
  auto p = plan(info, "");
  EXPECT_EQ(p.code(), Code::no_device);
  EXPECT_THAT(p.status().message(), HasSubstr("MIG mode without any MIG instance"));
  EXPECT_EQ(plan(SystemInfo{}, "").code(), Code::no_device);
}

TEST(BurnOptions, ParsesPrecisionLists) {
  EXPECT_TRUE(parse_precisions("all")->empty());
  EXPECT_THAT(*parse_precisions("fp16,bf16,fp16"), ElementsAre(Precision::fp16, Precision::bf16));
  auto bad = parse_precisions("fp16,fp7");
  EXPECT_EQ(bad.code(), Code::invalid_argument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'fp7'"));
  EXPECT_EQ(parse_precisions("").code(), Code::invalid_argument);
}

TEST(BurnOptions, BecomeWorkerArguments) {
  Options o;
  EXPECT_THAT(worker_arguments(o),
              ElementsAre("--precision", "all", "--duration", "10", "--memory", "--host-link"));
  o.precisions = {Precision::fp8, Precision::int8};
  o.duration_seconds = 2.5;
  o.size = 4096;
  o.memory_fraction = 0.5;
  o.memory = false;
  o.host_link = false;
  o.inject_fault = true;
  EXPECT_THAT(worker_arguments(o),
              ElementsAre("--precision", "fp8,int8", "--duration", "2.5", "--size", "4096",
                          "--memory-fraction", "0.5", "--inject-fault"));
}

TEST(BurnWorker, IsFoundThroughTheEnvironment) {
  setenv("GPUSCOPE_BURN_WORKER", GPUSCOPE_FAKE_BURN_WORKER, 1);
  EXPECT_EQ(*locate_worker(), GPUSCOPE_FAKE_BURN_WORKER);
  setenv("GPUSCOPE_BURN_WORKER", "/nonexistent/gpuscope-burn-worker", 1);
  auto missing = locate_worker();
  EXPECT_EQ(missing.code(), Code::not_found);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/gpuscope-burn-worker"));
  unsetenv("GPUSCOPE_BURN_WORKER");
}

TEST(BurnWorker, IsLookedForNextToThisProgram) {
  unsetenv("GPUSCOPE_BURN_WORKER");
  auto found = locate_worker();
  if (found.ok()) GTEST_SKIP() << "a worker sits next to the test binary: " << *found;
  EXPECT_EQ(found.code(), Code::not_found);
  EXPECT_THAT(found.status().message(), HasSubstr("gpuscope-burn-worker/gpuscope-burn-worker"));
  EXPECT_THAT(found.status().message(), HasSubstr("GPUSCOPE_BURN_WORKER"));
}

}  // namespace
}  // namespace gpuscope::burn
