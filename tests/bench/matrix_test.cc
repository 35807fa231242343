// The matrix: expansion from CLI lists, gpuscope-torch arguments, input paths, presets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Matrix, ExpandsEveryCombinationInOrder) {
  MatrixOptions o;
  o.models = {"vit_b16", "resnet50"};
  o.tasks = {"train", "infer"};
  o.modes = {"fp32", "amp_bf16"};
  o.knobs = {{"graphs", {"on", "off"}}};
  auto rows = expand_matrix(o);
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  ASSERT_EQ(rows->size(), 16u);
  EXPECT_EQ((*rows)[0].label(), "vit_b16 train fp32 graphs=on");
  EXPECT_EQ((*rows)[1].label(), "vit_b16 train fp32 graphs=off");
  EXPECT_EQ((*rows)[2].label(), "vit_b16 train amp_bf16 graphs=on");
  EXPECT_EQ((*rows)[4].label(), "vit_b16 infer fp32 graphs=on");
  EXPECT_EQ((*rows)[15].label(), "resnet50 infer amp_bf16 graphs=off");
}

TEST(Matrix, KnobsMultiplyAndMapToSwitches) {
  MatrixOptions o;
  o.models = {"resnet50"};
  o.tasks = {"train"};
  o.modes = {"amp_fp16"};
  o.batches = {"auto", "256"};
  o.knobs = {{"cudnn_benchmark", {"off", "on"}}, {"channels_last", {"on", "off", "auto"}}};
  o.warmup = 3;
  o.windows = 2;
  o.steps = 4;
  o.extra_args = {"--sdpa", "math"};
  auto rows = expand_matrix(o);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u * 2u * 3u);
  EXPECT_THAT((*rows)[0].torch_args(),
              ElementsAre("--model", "resnet50", "--task", "train", "--mode", "amp_fp16", "--batch",
                          "auto", "--cudnn-benchmark", "off", "--channels-last", "on", "--warmup",
                          "3", "--windows", "2", "--steps", "4", "--sdpa", "math"));
  EXPECT_EQ((*rows)[0].variant(), "batch=auto cudnn_benchmark=off channels_last=on --sdpa math");
}

TEST(Matrix, InputPathsBecomeLoaderSwitches) {
  auto host = parse_input_path("host:workers=8,pinned=on,non_blocking=off");
  ASSERT_TRUE(host.ok()) << host.status().to_string();
  EXPECT_EQ(host->kind, "host");
  EXPECT_EQ(host->workers, 8);
  EXPECT_EQ(host->pinned, true);
  EXPECT_EQ(host->non_blocking, false);
  auto jpeg = parse_input_path("jpeg:data=/data/imgs,workers=4");
  ASSERT_TRUE(jpeg.ok());
  RowSpec r;
  r.model = "resnet50";
  r.task = "train";
  r.mode = "amp_bf16";
  r.input = *jpeg;
  EXPECT_THAT(r.torch_args(),
              ElementsAre("--model", "resnet50", "--task", "train", "--mode", "amp_bf16", "--input",
                          "jpeg", "--loader-workers", "4", "--data", "/data/imgs"));
  EXPECT_EQ(r.variant(), "input=jpeg workers=4 data=/data/imgs");
  r.input = *host;
  EXPECT_THAT(r.torch_args(), ::testing::IsSupersetOf({"--pinned", "on", "--non-blocking", "off"}));
  EXPECT_TRUE(parse_input_path("synthetic").ok());
  EXPECT_EQ(parse_input_path("synthetic").value().label(), "synthetic");
}

TEST(Matrix, RejectsWhatGpuscopeTorchWouldNotRun) {
  MatrixOptions o;
  o.models = {"vit_b16"};
  o.tasks = {"train"};
  o.modes = {"fp12"};
  EXPECT_THAT(expand_matrix(o).status().message(), HasSubstr("unknown mode 'fp12'"));
  o.modes = {"fp32"};
  o.tasks = {"eval"};
  EXPECT_EQ(expand_matrix(o).code(), Code::invalid_argument);
  o.tasks = {"train"};
  o.knobs = {{"turbo", {"on"}}};
  EXPECT_THAT(expand_matrix(o).status().message(), HasSubstr("unknown knob 'turbo'"));
  o.knobs = {{"fused_adamw", {"auto"}}};  // fused AdamW has no auto
  EXPECT_EQ(expand_matrix(o).code(), Code::invalid_argument);
  o.knobs = {};
  o.batches = {"0"};
  EXPECT_EQ(expand_matrix(o).code(), Code::invalid_argument);
  o.batches = {};
  o.models = {};
  EXPECT_EQ(expand_matrix(o).code(), Code::invalid_argument);
  EXPECT_EQ(parse_input_path("disk").code(), Code::invalid_argument);
  EXPECT_EQ(parse_input_path("host:workers=many").code(), Code::invalid_argument);
  EXPECT_EQ(parse_input_path("host:pinned=maybe").code(), Code::invalid_argument);
  EXPECT_EQ(parse_input_path("host:data=/x").code(), Code::invalid_argument);  // jpeg only
  EXPECT_EQ(parse_input_path("host:workers").code(), Code::invalid_argument);
}

TEST(Presets, SeedsReproduceTheSeedExperiments) {
  auto rows = preset("seeds");
  ASSERT_TRUE(rows.ok());
  // seeds/000: ViT-B/16, every mode, training and inference, at the default batch.
  std::vector<std::string> vit;
  for (const RowSpec& r : *rows) {
    if (r.model == "vit_b16") vit.push_back(r.task + " " + r.mode + " " + r.variant());
  }
  ASSERT_EQ(vit.size(), 14u);
  for (const std::string& mode : all_modes()) {
    EXPECT_NE(std::find(vit.begin(), vit.end(), "train " + mode + " "), vit.end()) << mode;
    EXPECT_NE(std::find(vit.begin(), vit.end(), "infer " + mode + " "), vit.end()) << mode;
  }
  // seeds/002: ResNet-50 training, AMP on/off x cudnn.benchmark on/off.
  std::set<std::string> amp_cudnn;
  std::vector<std::string> fed;
  for (const RowSpec& r : *rows) {
    if (r.model != "resnet50") continue;
    EXPECT_EQ(r.task, "train");
    if (r.mode != "amp_bf16") amp_cudnn.insert(r.mode + " " + r.variant());
    if (r.mode == "amp_bf16") fed.push_back(r.variant());
  }
  EXPECT_EQ(amp_cudnn,
            (std::set<std::string>{"fp32 cudnn_benchmark=off", "fp32 cudnn_benchmark=on",
                                   "amp_fp16 cudnn_benchmark=off", "amp_fp16 cudnn_benchmark=on"}));
  // The host-fed comparison: a synthetic baseline, then workers 0 vs 8, pageable vs pinned,
  // blocking vs overlapped copies, each row one change from the one before.
  EXPECT_THAT(fed, ElementsAre("", "input=host workers=0 pinned=off non_blocking=off",
                               "input=host workers=8 pinned=off non_blocking=off",
                               "input=host workers=8 pinned=on non_blocking=off",
                               "input=host workers=8 pinned=on non_blocking=on"));
  for (const RowSpec& r : *rows) {
    EXPECT_TRUE(r.warmup && r.windows && r.steps) << r.label();  // short, to fit ~9 minutes
  }
}

TEST(Presets, StudyLevelsCoverTheThreeModelsAndOnlyTheFullOneSearchesBatches) {
  auto quick = preset("study-quick");
  auto standard = preset("study");
  auto full = preset("study-full");
  ASSERT_TRUE(quick.ok() && standard.ok() && full.ok());
  EXPECT_EQ(quick->size(), 3u * 2u * 3u);
  EXPECT_EQ(standard->size(), 3u * 2u * 7u);
  EXPECT_EQ(full->size(), standard->size());
  std::set<std::string> models, quick_modes;
  for (const RowSpec& r : *quick) {
    models.insert(r.model);
    quick_modes.insert(r.mode);
    EXPECT_EQ(r.batch, "");
  }
  EXPECT_EQ(models, (std::set<std::string>{"vit_b16", "resnet50", "gpt2"}));
  EXPECT_EQ(quick_modes, (std::set<std::string>{"tf32", "amp_bf16", "bf16"}));
  for (const RowSpec& r : *standard) EXPECT_EQ(r.batch, "");
  for (const RowSpec& r : *full) EXPECT_EQ(r.batch, "auto");
  // Shorter guard runs in the shorter levels; not a variant (every row shares its guard).
  EXPECT_LT(quick->front().guard_steps.value_or(0), standard->front().guard_steps.value_or(0));
  EXPECT_LT(standard->front().guard_steps.value_or(0), full->front().guard_steps.value_or(0));
  EXPECT_EQ(standard->front().variant(), "");
  // Each level measures longer than the one before.
  const RowSpec& q = quick->front();
  const RowSpec& d = standard->front();
  const RowSpec& f = full->front();
  EXPECT_LT(*q.windows * *q.steps, *d.windows * *d.steps);
  EXPECT_LT(*d.windows * *d.steps, *f.windows * *f.steps);
  EXPECT_EQ(preset("everything").code(), Code::not_found);
}

}  // namespace
}  // namespace gpuscope::bench
