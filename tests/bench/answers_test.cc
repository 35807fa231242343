// Answers from rows recorded on the H100 (tests/bench/data/h100_vit_rows_2026-11-22.json:
// gpuscope-torch alone, ViT-B/16, every mode), with energy and knob rows added by hand where the
// recording has none (marked as such below).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

std::vector<Row> recorded_rows() {
  std::ifstream in(std::string(GPUSCOPE_BENCH_TEST_DATA) + "/h100_vit_rows_2026-11-22.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<Row> rows;
  for (const auto& r : doc["rows"]) {
    Row row;
    row.spec.model = r["model"];
    row.spec.task = r["task"];
    row.spec.mode = r["mode"];
    row.batch = r["batch"].get<int>();
    row.samples_per_second = r["samples_per_second"].get<double>();
    row.peak_allocated_bytes = r["peak_allocated_bytes"].get<double>();
    rows.push_back(row);
  }
  return rows;
}

Row* find(std::vector<Row>& rows, const std::string& task, const std::string& mode) {
  for (Row& r : rows) {
    if (r.spec.task == task && r.spec.mode == mode) return &r;
  }
  return nullptr;
}

const Answer& answer(const std::vector<Answer>& answers, const std::string& task) {
  for (const Answer& a : answers) {
    if (a.task == task) return a;
  }
  throw std::runtime_error("no answer for " + task);
}

TEST(Answers, FromTheH100Recording) {
  auto rows = recorded_rows();
  ASSERT_EQ(rows.size(), 14u);
  auto answers = compute_answers(rows);
  ASSERT_EQ(answers.size(), 2u);  // vit_b16 train, vit_b16 infer
  const Answer& train = answer(answers, "train");
  ASSERT_TRUE(train.fastest);
  EXPECT_EQ(train.fastest->mode, "fp16");  // 3167 samples/s, ahead of bf16's 2978
  EXPECT_NEAR(train.fastest->samples_per_second, 3166.83, 0.01);
  ASSERT_TRUE(train.smallest_memory);
  EXPECT_EQ(train.smallest_memory->mode, "fp16");  // ties bf16 at 9.65 GiB; the first wins
  EXPECT_FALSE(train.most_efficient);              // the recording has no energy
  const Answer& infer = answer(answers, "infer");
  EXPECT_EQ(infer.fastest->mode, "bf16");
  EXPECT_NEAR(infer.fastest->samples_per_second, 10216.48, 0.01);
}

TEST(Answers, ABadGuardVerdictIsNotFastestNorMostEfficient) {
  auto rows = recorded_rows();
  // Energy per sample, hand-made (not in the recording): fp16 the lowest, then bf16.
  for (Row& r : rows) r.energy_per_sample_j = 600.0 / *r.samples_per_second;
  find(rows, "train", "fp16")->guard = GuardResult{Verdict::diverged, "rose"};
  find(rows, "train", "bf16")->guard = GuardResult{Verdict::ok, ""};
  auto answers = compute_answers(rows);
  const Answer& train = answer(answers, "train");
  EXPECT_EQ(train.fastest->mode, "bf16");
  ASSERT_TRUE(train.most_efficient);
  EXPECT_EQ(train.most_efficient->mode, "bf16");
  EXPECT_NEAR(*train.most_efficient->joules_per_sample, 600.0 / 2977.56, 1e-4);
  // fp16 ties bf16 for the smallest footprint: the tie goes to the mode that learns.
  EXPECT_EQ(train.smallest_memory->mode, "bf16");
  // Strictly smaller still wins whatever the guard says (memory is a fact about the mode).
  find(rows, "train", "fp16")->peak_allocated_bytes = 1e9;
  EXPECT_EQ(answer(compute_answers(rows), "train").smallest_memory->mode, "fp16");
  find(rows, "train", "fp16")->peak_allocated_bytes =
      find(rows, "train", "bf16")->peak_allocated_bytes;
  // An unknown verdict (no guard run) does not exclude a mode.
  find(rows, "train", "fp16")->guard = GuardResult{Verdict::unknown, "no guard"};
  EXPECT_EQ(answer(compute_answers(rows), "train").fastest->mode, "fp16");
}

TEST(Answers, NoMostEfficientModeWhenATrustedModeHasNoEnergy) {
  auto rows = recorded_rows();
  for (Row& r : rows) r.energy_per_sample_j = 600.0 / *r.samples_per_second;
  ASSERT_TRUE(answer(compute_answers(rows), "train").most_efficient);
  // bf16's windows were too short for the energy counter: it might have been the best one.
  find(rows, "train", "bf16")->energy_per_sample_j.reset();
  auto answers = compute_answers(rows);
  EXPECT_FALSE(answer(answers, "train").most_efficient);
  EXPECT_TRUE(answer(answers, "train").fastest);         // speed is still known
  EXPECT_TRUE(answer(answers, "infer").most_efficient);  // the other task is complete
  // A mode that fails the guard is not a candidate, so its missing energy does not matter.
  find(rows, "train", "bf16")->guard = GuardResult{Verdict::nan, "not finite"};
  EXPECT_TRUE(answer(compute_answers(rows), "train").most_efficient);
}

TEST(Answers, SkippedRowsAreNeverChosen) {
  auto rows = recorded_rows();
  Row oom = *find(rows, "infer", "bf16");
  find(rows, "infer", "bf16")->skipped = true;
  find(rows, "infer", "bf16")->skip_code = "out_of_memory";
  EXPECT_EQ(answer(compute_answers(rows), "infer").fastest->mode, "fp16");
}

Row knob_row(const std::string& mode, std::vector<std::pair<std::string, std::string>> knobs,
             double sps, double memory, InputPath input = {}) {
  Row r;
  r.spec.model = "resnet50";
  r.spec.task = "train";
  r.spec.mode = mode;
  r.spec.knobs = std::move(knobs);
  r.spec.input = input;
  r.samples_per_second = sps;
  r.peak_allocated_bytes = memory;
  return r;
}

TEST(Answers, WhatEachKnobBought) {
  // Shaped like seeds/002 (hand-made numbers): cudnn.benchmark on/off under fp32 and AMP, and a
  // host-fed run with 0 and 8 loader workers.
  InputPath w0, w8;
  w0.kind = w8.kind = "host";
  w0.workers = 0;
  w8.workers = 8;
  std::vector<Row> rows = {
      knob_row("fp32", {{"cudnn_benchmark", "off"}}, 800, 20e9),
      knob_row("fp32", {{"cudnn_benchmark", "on"}}, 1000, 21e9),
      knob_row("amp_fp16", {{"cudnn_benchmark", "off"}}, 2000, 12e9),
      knob_row("amp_fp16", {{"cudnn_benchmark", "on"}}, 2600, 12.5e9),
      knob_row("amp_bf16", {}, 1000, 10e9, w0),
      knob_row("amp_bf16", {}, 2500, 10e9, w8),
  };
  auto answers = compute_answers(rows);
  ASSERT_EQ(answers.size(), 1u);
  const auto& effects = answers[0].knob_effects;
  ASSERT_EQ(effects.size(), 3u);  // one per pair, from the baseline (off, fewer workers)
  EXPECT_EQ(effects[0].knob, "cudnn_benchmark");
  EXPECT_EQ(effects[0].from, "off");
  EXPECT_EQ(effects[0].to, "on");
  EXPECT_EQ(effects[0].mode, "fp32");
  EXPECT_DOUBLE_EQ(effects[0].speedup, 1.25);
  EXPECT_DOUBLE_EQ(*effects[0].memory_change_bytes, 1e9);
  EXPECT_EQ(effects[1].mode, "amp_fp16");
  EXPECT_DOUBLE_EQ(effects[1].speedup, 1.3);
  EXPECT_EQ(effects[2].knob, "loader_workers");
  EXPECT_EQ(effects[2].from, "0");
  EXPECT_EQ(effects[2].to, "8");
  EXPECT_DOUBLE_EQ(effects[2].speedup, 2.5);
  EXPECT_EQ(answers[0].fastest->mode, "amp_fp16");
  EXPECT_EQ(answers[0].fastest->variant, "cudnn_benchmark=on");
}

}  // namespace
}  // namespace gpuscope::bench

namespace gpuscope::bench {
namespace {

Row measured_row(const std::string& mode, double samples_per_second, double joules_per_sample,
                 double spread) {
  Row r;
  r.spec.model = "resnet50";
  r.spec.task = "train";
  r.spec.mode = mode;
  r.samples_per_second = samples_per_second;
  r.energy_per_sample_j = joules_per_sample;
  r.step_relative_spread = spread;
  return r;
}

// Two quick studies an hour apart named amp_bf16 and then bf16 the most efficient ResNet-50
// training mode, 1 % apart: within the rows' measured spread that is a tie, and is said so.
TEST(BenchAnswers, AWinWithinTheMeasuredSpreadIsATie) {
  auto answers = compute_answers({measured_row("fp32", 900, 0.80, 0.02),
                                  measured_row("amp_bf16", 2500, 0.280, 0.03),
                                  measured_row("bf16", 2475, 0.2828, 0.02)});
  ASSERT_EQ(answers.size(), 1u);
  const Answer& a = answers[0];
  ASSERT_TRUE(a.fastest && a.most_efficient);
  EXPECT_EQ(a.fastest->mode, "amp_bf16");
  EXPECT_THAT(a.fastest->tied_with, ::testing::ElementsAre("bf16"));
  EXPECT_EQ(a.most_efficient->mode, "amp_bf16");
  EXPECT_THAT(a.most_efficient->tied_with, ::testing::ElementsAre("bf16"));
  EXPECT_THAT(a.knob_effects, ::testing::IsEmpty());

  // Far beyond the spread: a clear winner.
  auto clear = compute_answers(
      {measured_row("fp32", 900, 0.80, 0.02), measured_row("amp_bf16", 2500, 0.280, 0.03)});
  EXPECT_THAT(clear[0].fastest->tied_with, ::testing::IsEmpty());
  BenchResult result;
  result.answers = answers;
  const nlohmann::json doc = bench_to_json(result);
  EXPECT_EQ(doc["answers"][0]["fastest"]["tied_with"], nlohmann::json::array({"bf16"}));
}

}  // namespace
}  // namespace gpuscope::bench
