// The one selector rule and Target: splitting --gpu values, resolving them for observing and for
// running (a GPU in MIG mode runs on its instances), and the errors every command prints.
#include "gpuscope/target.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuscope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Target gpu(unsigned index, std::string uuid, bool mig_mode = false) {
  Target t;
  t.gpu_index = index;
  t.gpu_uuid = std::move(uuid);
  t.gpu_name = "NVIDIA A100-SXM4-40GB";
  t.name = t.gpu_name;
  t.mig_mode = mig_mode;
  return t;
}

Target instance(const Target& parent, unsigned gi, std::string uuid, std::string profile) {
  Target t = parent;
  t.mig_mode = false;
  t.mig = MigPlacement{gi, 0, std::move(uuid), profile};
  t.name = parent.gpu_name + " MIG " + profile;
  return t;
}

// GPU 0 whole; GPU 1 in MIG mode with two instances; GPU 2 in MIG mode with none.
std::vector<Target> machine() {
  const Target g1 = gpu(1, "GPU-bbb", true);
  return {gpu(0, "GPU-aaa"), g1, instance(g1, 1, "MIG-one", "3g.20gb"),
          instance(g1, 5, "MIG-two", "2g.10gb"), gpu(2, "GPU-ccc", true)};
}

std::vector<std::string> labels(const std::vector<Target>& targets) {
  std::vector<std::string> out;
  for (const Target& t : targets) out.push_back(t.label());
  return out;
}

Result<std::vector<Target>> resolve(std::vector<std::string> selectors, TargetUse use) {
  const std::vector<Target> available = machine();
  return resolve_targets(available, selectors, use);
}

TEST(Target, UuidAndLabelAreTheInstancesForAMigInstance) {
  const std::vector<Target> m = machine();
  EXPECT_EQ(m[0].uuid(), "GPU-aaa");
  EXPECT_EQ(m[0].label(), "GPU 0");
  EXPECT_EQ(m[2].uuid(), "MIG-one");
  EXPECT_EQ(m[2].gpu_uuid, "GPU-bbb");
  EXPECT_EQ(m[2].label(), "GPU 1 MIG 3g.20gb (GI 1 CI 0)");
  Target unnamed = m[2];
  unnamed.mig->profile.clear();
  EXPECT_EQ(unnamed.label(), "GPU 1 MIG instance (GI 1 CI 0)");
  EXPECT_EQ(mig_profile_from_name("NVIDIA A100-SXM4-40GB MIG 3g.20gb"), "3g.20gb");
  EXPECT_EQ(mig_profile_from_name("NVIDIA H100 80GB HBM3"), "");
}

TEST(GpuSelector, SplitsListsAndRefusesEmptyEntries) {
  EXPECT_THAT(*split_gpu_selector("0"), ElementsAre("0"));
  EXPECT_THAT(*split_gpu_selector("0,GPU-aaa,MIG-one"), ElementsAre("0", "GPU-aaa", "MIG-one"));
  EXPECT_THAT(*split_gpu_selector("all"), ElementsAre("all"));
  auto empty = split_gpu_selector("");
  EXPECT_EQ(empty.code(), Code::invalid_argument);
  EXPECT_EQ(empty.status().message(), "an empty GPU selector; omit --gpu to use every GPU");
  for (const char* bad : {"0,", ",0", "0,,1", ","}) {
    auto split = split_gpu_selector(bad);
    EXPECT_EQ(split.code(), Code::invalid_argument) << bad;
    EXPECT_THAT(split.status().message(), HasSubstr("an empty entry in the GPU list")) << bad;
  }
  auto cuda = split_gpu_selector("cuda:0");
  EXPECT_EQ(cuda.code(), Code::invalid_argument);
  EXPECT_THAT(cuda.status().message(), HasSubstr("'cuda:0' is not a GPU"));
}

TEST(GpuSelector, ObservingNamesGpusThemselvesInNvmlOrderOnce) {
  auto all = resolve({}, TargetUse::observe);
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  EXPECT_THAT(labels(*all), ElementsAre("GPU 0", "GPU 1", "GPU 2"));
  auto picked = resolve({"GPU-bbb", "0", "1"}, TargetUse::observe);
  ASSERT_TRUE(picked.ok());
  EXPECT_THAT(labels(*picked), ElementsAre("GPU 0", "GPU 1"));
  auto listed = resolve({"2,0"}, TargetUse::observe);
  ASSERT_TRUE(listed.ok());
  EXPECT_THAT(labels(*listed), ElementsAre("GPU 0", "GPU 2"));
  auto mig = resolve({"MIG-two"}, TargetUse::observe);
  ASSERT_TRUE(mig.ok());
  EXPECT_THAT(labels(*mig), ElementsAre("GPU 1 MIG 2g.10gb (GI 5 CI 0)"));
}

TEST(GpuSelector, RunningOnAGpuInMigModeMeansItsInstances) {
  auto all = resolve({"all"}, TargetUse::run);
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  EXPECT_THAT(labels(*all), ElementsAre("GPU 0", "GPU 1 MIG 3g.20gb (GI 1 CI 0)",
                                        "GPU 1 MIG 2g.10gb (GI 5 CI 0)"));
  auto one = resolve({"1"}, TargetUse::run);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 2u);
  auto instance = resolve({"MIG-one"}, TargetUse::run);
  ASSERT_TRUE(instance.ok());
  ASSERT_EQ(instance->size(), 1u);
  EXPECT_EQ((*instance)[0].uuid(), "MIG-one");
  auto empty = resolve({"2"}, TargetUse::run);
  EXPECT_EQ(empty.code(), Code::no_device);
  EXPECT_THAT(empty.status().message(), HasSubstr("GPU 2 (NVIDIA A100-SXM4-40GB) is in MIG mode"));
}

TEST(GpuSelector, WhatNamesNothingIsNotFoundAndSaysWhatThereIs) {
  auto index = resolve({"7"}, TargetUse::observe);
  EXPECT_EQ(index.code(), Code::not_found);
  EXPECT_EQ(index.status().message(), "there is no GPU 7 (this machine has 3 GPUs: 0..2)");
  auto huge = resolve({"99999999999999999999999"}, TargetUse::observe);
  EXPECT_EQ(huge.code(), Code::not_found);
  EXPECT_THAT(huge.status().message(), HasSubstr("there is no GPU 99999999999999999999999"));
  auto uuid = resolve({"GPU-nope"}, TargetUse::run);
  EXPECT_EQ(uuid.code(), Code::not_found);
  EXPECT_EQ(uuid.status().message(), "there is no GPU with UUID GPU-nope");
  auto mig = resolve({"MIG-nope"}, TargetUse::run);
  EXPECT_EQ(mig.code(), Code::not_found);
  EXPECT_EQ(mig.status().message(), "no MIG instance has the UUID MIG-nope");
  // A GPU's UUID never names an instance, and an instance's never a GPU.
  EXPECT_EQ(resolve({"GPU-bbb"}, TargetUse::observe)->size(), 1u);
  EXPECT_EQ(resolve({"0,"}, TargetUse::observe).code(), Code::invalid_argument);
  EXPECT_EQ(resolve({""}, TargetUse::run).code(), Code::invalid_argument);
}

TEST(GpuSelector, AnUnavailableGpuIsResolvedByIndexAsItIs) {
  std::vector<Target> available = {gpu(0, "GPU-aaa"), Target{}};
  available[1].gpu_index = 1;
  available[1].unavailable = Status(Code::gpu_lost, "GPU is lost");
  auto all = resolve_targets(available, {}, TargetUse::observe);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].unavailable.code(), Code::gpu_lost);
  const std::vector<std::string> one = {"1"};
  EXPECT_EQ(resolve_targets(available, one, TargetUse::observe)->size(), 1u);
}

}  // namespace
}  // namespace gpuscope
