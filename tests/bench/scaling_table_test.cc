// bench --gpus: the scaling table from rows run on 1..N GPUs.
#include "gpuscope/bench_scaling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace gpuscope::bench {
namespace {

Row row(const std::string& model, int gpus, std::optional<double> sps) {
  Row r;
  r.spec.model = model;
  r.spec.task = "train";
  r.spec.mode = "amp_bf16";
  r.spec.gpus = gpus;
  r.samples_per_second = sps;
  r.peak_reserved_bytes = 10e9;
  if (gpus > 1) {
    r.world_size = gpus;
    r.collective_seconds_per_step = 0.010;
    r.exposed_seconds_per_step = 0.002;
    r.overlap_fraction = 0.8;
    r.peak_reserved_per_gpu_bytes = 12e9;
  }
  if (!sps) {
    r.skipped = true;
    r.skip_code = "failed";
    r.skip_reason = "rank 1 died";
  }
  return r;
}

TEST(ScalingTable, EfficiencyAgainstTheOneGpuRow) {
  const auto table =
      scaling_table({row("vit_b16", 1, 2600.0), row("vit_b16", 2, 5100.0), row("gpt2", 1, 250.0),
                     row("gpt2", 2, std::nullopt), row("resnet50", 2, 3000.0)});
  ASSERT_EQ(table.size(), 5u);
  EXPECT_EQ(table[0].configuration, "vit_b16 train amp_bf16");
  EXPECT_EQ(table[0].gpus, 1);
  EXPECT_DOUBLE_EQ(*table[0].efficiency, 1.0);
  EXPECT_FALSE(table[0].collective_seconds);
  EXPECT_DOUBLE_EQ(*table[0].memory_per_gpu_bytes, 10e9);
  EXPECT_EQ(table[1].gpus, 2);
  EXPECT_NEAR(*table[1].efficiency, 5100.0 / 5200.0, 1e-12);
  EXPECT_DOUBLE_EQ(*table[1].collective_seconds, 0.010);
  EXPECT_DOUBLE_EQ(*table[1].overlap_fraction, 0.8);
  EXPECT_DOUBLE_EQ(*table[1].memory_per_gpu_bytes, 12e9);
  EXPECT_TRUE(table[3].skipped);
  EXPECT_EQ(table[3].skip_reason, "rank 1 died");
  EXPECT_FALSE(table[3].efficiency);
  // No 1-GPU row to compare with.
  EXPECT_EQ(table[4].configuration, "resnet50 train amp_bf16");
  EXPECT_FALSE(table[4].efficiency);
}

// The twin of row("vit_b16", gpus, ...) without gradient sync, its slowest rank at `slowest`.
Row alone(int gpus, std::optional<double> slowest) {
  Row r =
      row("vit_b16", gpus, slowest ? std::optional<double>(gpus * *slowest * 1.01) : std::nullopt);
  r.spec.grad_sync = false;
  r.collective_seconds_per_step.reset();
  r.exposed_seconds_per_step.reset();
  r.overlap_fraction.reset();
  r.slowest_rank_samples_per_second = slowest;
  return r;
}

TEST(ScalingTable, TheTwinWithoutSyncSplitsTheEfficiencyIntoTheGpusAndCommunication) {
  // Session 10's 2xH200 figures for ViT-B/16: 3068 samples/s alone, 3005 on GPU 1 while both
  // trained apart, 5797 data parallel.
  const auto table =
      scaling_table({row("vit_b16", 1, 3068.0), row("vit_b16", 2, 5797.0), alone(2, 3005.0),
                     row("vit_b16", 4, 11000.0), alone(4, std::nullopt)});
  ASSERT_EQ(table.size(), 3u) << "the twins are not rows of their own";
  const ScalingRow& two = table[1];
  EXPECT_EQ(two.configuration, "vit_b16 train amp_bf16");
  EXPECT_NEAR(*two.efficiency, 5797.0 / 6136.0, 1e-12);
  EXPECT_DOUBLE_EQ(*two.slowest_gpu_samples_per_second, 3005.0);
  EXPECT_DOUBLE_EQ(*two.ceiling_samples_per_second, 6010.0);
  EXPECT_NEAR(*two.gpus_together, 6010.0 / 6136.0, 1e-12);
  EXPECT_NEAR(*two.communication, 5797.0 / 6010.0, 1e-12);
  EXPECT_NEAR(*two.gpus_together * *two.communication, *two.efficiency, 1e-12);
  // A twin that could not run: no ceiling, and why.
  EXPECT_FALSE(table[2].ceiling_samples_per_second);
  EXPECT_FALSE(table[2].communication);
  EXPECT_EQ(table[2].no_sync_skip_reason, "rank 1 died");
  EXPECT_FALSE(table[0].ceiling_samples_per_second) << "one GPU has no ceiling to split";

  std::ostringstream out;
  print_scaling_table(table, out);
  for (const char* shown :
       {"no-sync ceiling", "6010.0", "97.9%", "96.5%", "skipped: rank 1 died", "--grad-sync off"}) {
    EXPECT_NE(out.str().find(shown), std::string::npos) << shown << "\n" << out.str();
  }
  const nlohmann::json j = scaling_to_json(table);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[1]["gpus"], 2);
  EXPECT_DOUBLE_EQ(j[1]["no_sync_ceiling_samples_per_second"].get<double>(), 6010.0);
  EXPECT_NEAR(j[1]["communication"].get<double>(), 5797.0 / 6010.0, 1e-12);
  EXPECT_TRUE(j[0]["communication"].is_null());
  EXPECT_EQ(j[2]["no_sync_skip_reason"], "rank 1 died");
}

TEST(ScalingTable, WithoutTwinsTheTableHasNoCeilingColumns) {
  std::ostringstream out;
  print_scaling_table(scaling_table({row("vit_b16", 1, 2600.0), row("vit_b16", 2, 5100.0)}), out);
  EXPECT_EQ(out.str().find("ceiling"), std::string::npos) << out.str();
}

TEST(ScalingTable, RowsOnOneGpuCountOnlyAreNotAScalingTable) {
  EXPECT_TRUE(scaling_table({row("vit_b16", 1, 2600.0), row("gpt2", 1, 250.0)}).empty());
  std::ostringstream out;
  print_scaling_table({}, out);
  EXPECT_EQ(out.str(), "");
}

TEST(ScalingTable, PrintsEfficiencyAndOverlap) {
  std::ostringstream out;
  print_scaling_table(scaling_table({row("vit_b16", 1, 2600.0), row("vit_b16", 2, 5100.0)}), out);
  EXPECT_NE(out.str().find("98.1%"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("80.0%"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("10.00 ms"), std::string::npos) << out.str();
}

TEST(ScalingTable, SaysWhyAStepRunAsAGraphHasNoAllReduceFigures) {
  Row captured = row("vit_b16", 2, 5800.0);
  captured.collective_seconds_per_step.reset();
  captured.exposed_seconds_per_step.reset();
  captured.overlap_fraction.reset();
  std::ostringstream out;
  print_scaling_table(scaling_table({row("vit_b16", 1, 3050.0), captured}), out);
  EXPECT_NE(out.str().find("ran as a CUDA graph"), std::string::npos) << out.str();
  std::ostringstream eager;
  print_scaling_table(scaling_table({row("vit_b16", 1, 3050.0), row("vit_b16", 2, 5800.0)}), eager);
  EXPECT_EQ(eager.str().find("CUDA graph"), std::string::npos) << eager.str();
}

TEST(ScalingTable, SaysWhatAveragedTheGradientsAndWhyNotTheCopyEngines) {
  Row copy_engine = row("vit_b16", 2, 5800.0);
  copy_engine.all_reduce = "copy-engine";
  copy_engine.optimizer_sharded = true;
  Row fell_back = row("gpt2", 2, 490.0);
  fell_back.all_reduce = "nccl";
  fell_back.all_reduce_fallback = "rank 1's GPU has no peer access to rank 0's (0000:18:00.0)";
  const auto table =
      scaling_table({row("vit_b16", 1, 3050.0), copy_engine, row("gpt2", 1, 250.0), fell_back});
  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(table[1].all_reduce, "copy-engine");
  EXPECT_FALSE(table[1].all_reduce_fallback);
  EXPECT_EQ(table[3].all_reduce_fallback, fell_back.all_reduce_fallback);
  std::ostringstream out;
  print_scaling_table(table, out);
  EXPECT_NE(out.str().find("copy-engine, AdamW sharded"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("optimizer's state for 1/N"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("gpt2 train amp_bf16 on 2 GPUs: nccl, not the copy engines: rank 1's "
                           "GPU has no peer access"),
            std::string::npos)
      << out.str();
  const nlohmann::json j = scaling_to_json(table);
  EXPECT_EQ(j[1]["all_reduce"], "copy-engine");
  EXPECT_TRUE(j[1]["all_reduce_fallback"].is_null());
  EXPECT_EQ(j[3]["all_reduce"], "nccl");
  EXPECT_EQ(j[1]["optimizer_sharded"], true);
  EXPECT_TRUE(j[3]["optimizer_sharded"].is_null());
}

TEST(ScalingTable, GpuCounts) {
  EXPECT_EQ(*parse_gpu_counts("1,2,4"), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(*parse_gpu_counts("2,1"), (std::vector<int>{1, 2}));
  EXPECT_FALSE(parse_gpu_counts("0").ok());
  EXPECT_FALSE(parse_gpu_counts("1,x").ok());
  EXPECT_FALSE(parse_gpu_counts("1,1").ok());
  EXPECT_FALSE(parse_gpu_counts("").ok());
}

TEST(ScalingTable, GpuCountIsPartOfTheRowAndItsArguments) {
  RowSpec spec;
  spec.model = "vit_b16";
  spec.task = "train";
  spec.mode = "amp_bf16";
  EXPECT_EQ(spec.variant(), "");
  spec.gpus = 2;
  EXPECT_EQ(spec.variant(), "gpus=2");
  const auto args = spec.torch_args();
  const auto at = std::find(args.begin(), args.end(), "--world-size");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), "2");
}

TEST(ScalingTable, MatrixRepeatsEachRowPerGpuCount) {
  MatrixOptions o;
  o.models = {"vit_b16", "gpt2"};
  o.tasks = {"train"};
  o.modes = {"amp_bf16"};
  o.gpus = {1, 2};
  auto rows = expand_matrix(o);
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].gpus, 1);
  EXPECT_EQ((*rows)[1].gpus, 2);
  EXPECT_EQ((*rows)[1].model, "vit_b16");
  EXPECT_EQ((*rows)[2].model, "gpt2");
  o.tasks = {"infer"};
  EXPECT_FALSE(expand_matrix(o).ok()) << "data parallel trains";
}

TEST(ScalingTable, TheCeilingAddsATwinWithoutSyncAfterEachDataParallelRow) {
  MatrixOptions o;
  o.models = {"vit_b16"};
  o.tasks = {"train"};
  o.modes = {"amp_bf16"};
  o.gpus = {1, 2, 4};
  o.no_sync_ceiling = true;
  auto rows = expand_matrix(o);
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  ASSERT_EQ(rows->size(), 5u);
  EXPECT_TRUE((*rows)[0].grad_sync);
  EXPECT_EQ((*rows)[2].gpus, 2);
  EXPECT_FALSE((*rows)[2].grad_sync);
  EXPECT_EQ((*rows)[2].variant(), "gpus=2 grad-sync=off");
  const auto args = (*rows)[2].torch_args();
  const auto at = std::find(args.begin(), args.end(), "--grad-sync");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), "off");
  const auto synced_args = (*rows)[1].torch_args();
  EXPECT_EQ(std::find(synced_args.begin(), synced_args.end(), "--grad-sync"), synced_args.end());
  EXPECT_FALSE((*rows)[4].grad_sync);
  o.gpus = {1};
  EXPECT_FALSE(expand_matrix(o).ok()) << "no data-parallel row to measure a ceiling for";
}

TEST(ScalingTable, ATwinWithoutSyncAnswersNoQuestion) {
  // It trains nothing: never the fastest configuration, however many samples it reports.
  Row synced = row("vit_b16", 1, 2600.0);
  Row apart = alone(2, 2590.0);
  const auto answers = compute_answers({synced, apart});
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_TRUE(answers[0].fastest.has_value());
  EXPECT_EQ(answers[0].fastest->variant, "");
}

}  // namespace
}  // namespace gpuscope::bench
