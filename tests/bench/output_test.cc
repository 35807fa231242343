// bench's outputs: the JSON document's schema (pinned: `gpuscope study` reads it), the console
// table, the --list view, and the results-store run read back through the store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "gpuscope/bench.h"
#include "gpuscope/store.h"
#include "support/matchers.h"

namespace gpuscope::bench {
namespace {

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;

BenchResult sample_result() {
  BenchResult r;
  r.planned = 3;
  r.started_unix_s = 1795000000;
  r.wall_seconds = 42;
  r.torch_bin = "/opt/gpuscope-torch";
  r.gpu_name = "NVIDIA H100 80GB HBM3";
  r.gpu_uuid = "GPU-1";
  Row fp32;
  fp32.spec.model = "vit_b16";
  fp32.spec.task = "train";
  fp32.spec.mode = "fp32";
  fp32.batch = 160;
  fp32.samples_per_second = 400;
  fp32.peak_allocated_bytes = 20e9;
  fp32.energy_per_sample_j = 1.5;
  fp32.power_avg_w = 600;
  fp32.sm_activity = 0.9;
  fp32.guard = GuardResult{Verdict::ok, "2.3 -> 0.3"};
  Row fp16 = fp32;
  fp16.spec.mode = "fp16";
  fp16.samples_per_second = 3000;
  fp16.peak_allocated_bytes = 10e9;
  fp16.energy_per_sample_j = 0.2;
  fp16.guard = GuardResult{Verdict::nan, "the loss is not finite from step 30 on"};
  Row fp8 = fp32;
  fp8.spec.mode = "fp8";
  fp8.skipped = true;
  fp8.skip_code = "out_of_memory";
  fp8.skip_reason = "CUDA out of memory at batch 160";
  fp8.samples_per_second.reset();
  fp8.guard.reset();
  r.rows = {fp32, fp16, fp8};
  GuardRun g32{"vit_b16", "fp32", LossCurve{{2.3, 1.0, 0.3}, {}, {}}, {Verdict::ok, "ok"}};
  GuardRun g16{"vit_b16",
               "fp16",
               LossCurve{{2.3, 1.0, std::nan("")}, {}, {}},
               {Verdict::nan, "the loss is not finite from step 2 on"}};
  r.guards = {g32, g16};
  r.answers = compute_answers(r.rows);
  return r;
}

TEST(BenchJson, SchemaIsPinned) {
  nlohmann::json j = bench_to_json(sample_result());
  EXPECT_EQ(j["kind"], "gpuscope.bench");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(kBenchSchemaVersion, 1);
  ASSERT_EQ(j["answers"].size(), 1u);
  const auto& a = j["answers"][0];
  EXPECT_EQ(a["model"], "vit_b16");
  EXPECT_EQ(a["task"], "train");
  // fp16 is faster but its loss went NaN: fp32 is the answer.
  EXPECT_EQ(a["fastest"]["mode"], "fp32");
  EXPECT_EQ(a["fastest"]["samples_per_second"], 400.0);
  EXPECT_EQ(a["fastest"]["peak_allocated_bytes"], 20e9);
  EXPECT_EQ(a["most_efficient"]["mode"], "fp32");
  EXPECT_EQ(a["most_efficient"]["joules_per_sample"], 1.5);
  EXPECT_TRUE(a["most_efficient"].contains("samples_per_second"));
  EXPECT_TRUE(a["most_efficient"].contains("peak_allocated_bytes"));
  EXPECT_EQ(a["smallest_memory"]["mode"], "fp16");  // memory counts whatever the guard says
  EXPECT_EQ(a["smallest_memory"]["peak_allocated_bytes"], 10e9);
  ASSERT_EQ(j["rows"].size(), 3u);
  const auto& row = j["rows"][1];
  for (const char* key :
       {"model", "task", "mode", "variant", "batch", "status", "skip_code", "skip_reason",
        "samples_per_second", "step_relative_spread", "peak_allocated_bytes", "peak_reserved_bytes",
        "power_avg_w", "joules_per_sample", "sm_activity", "tensor_activity", "throttle_seconds",
        "guard", "torch_args"}) {
    EXPECT_TRUE(row.contains(key)) << key;
  }
  EXPECT_EQ(row["guard"]["verdict"], "nan");
  EXPECT_EQ(j["rows"][2]["status"], "skipped");
  EXPECT_EQ(j["rows"][2]["skip_code"], "out_of_memory");
  EXPECT_TRUE(j["rows"][2]["samples_per_second"].is_null());
  ASSERT_EQ(j["guard"].size(), 2u);
  EXPECT_TRUE(j["guard"][1]["curve"]["losses"][2].is_null());  // NaN is null in JSON
}

TEST(BenchJson, UnknownAnswersAreNull) {
  BenchResult r = sample_result();
  for (Row& row : r.rows) row.energy_per_sample_j.reset();
  r.answers = compute_answers(r.rows);
  nlohmann::json j = bench_to_json(r);
  EXPECT_TRUE(j["answers"][0]["most_efficient"].is_null());
  EXPECT_FALSE(j["answers"][0]["fastest"].is_null());
}

TEST(BenchConsole, RowsSkipsGuardAndAnswers) {
  std::ostringstream out;
  print_bench(sample_result(), out);
  const std::string text = out.str();
  EXPECT_THAT(text,
              HasAllSubstrs({"3 of 3 rows on NVIDIA H100 80GB HBM3", "skipped: out_of_memory",
                             "vit_b16 train fp8: CUDA out of memory at batch 160",
                             "vit_b16 fp16: nan", "fastest:          fp32 (400.0 samples/s)"}));
  std::ostringstream list;
  print_rows(preset("seeds").value(), list);
  EXPECT_THAT(list.str(), HasSubstr("--cudnn-benchmark off"));
  EXPECT_THAT(list.str(), HasSubstr("23 rows"));
}

TEST(BenchStore, RowsGoIntoTheStoreInTheReportsNames) {
  const std::string path = ::testing::TempDir() + "/bench_store_test.db";
  std::filesystem::remove(path);
  auto db = store::Store::open(path);
  ASSERT_TRUE(db.ok()) << db.status().to_string();
  auto id = (*db)->write(bench_to_run(sample_result(), "gpuscope bench --preset seeds"));
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  auto run = (*db)->load_run(*id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->run.kind, "bench");
  EXPECT_EQ(run->run.command_line, "gpuscope bench --preset seeds");
  ASSERT_EQ(run->run.gpus.size(), 1u);
  EXPECT_EQ(run->run.gpus[0].name, "NVIDIA H100 80GB HBM3");
  int throughput = 0, skipped = 0, energy = 0, loss = 0;
  for (const auto& m : run->measurements) {
    if (m.name == store::names::kSamplesPerS && m.value) {
      ++throughput;
      EXPECT_EQ(m.tags["batch_size"], 160);
      EXPECT_TRUE(m.tags.contains("guard"));
    }
    if (m.name == store::names::kSamplesPerS && !m.value) {
      ++skipped;
      EXPECT_EQ(m.tags["skipped"], "CUDA out of memory at batch 160");
    }
    if (m.name == store::names::kEnergyPerSample) ++energy;
    if (m.name == store::names::kLoss) ++loss;
  }
  EXPECT_EQ(throughput, 2);
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ(energy, 2);
  EXPECT_EQ(loss, 3 + 2);  // the NaN step is left out
  ASSERT_EQ(run->findings.size(), 1u);
  EXPECT_EQ(run->findings[0].id, "convergence_guard");
  EXPECT_THAT(run->findings[0].title, HasSubstr("vit_b16 fp16 nan"));
}

}  // namespace
}  // namespace gpuscope::bench
