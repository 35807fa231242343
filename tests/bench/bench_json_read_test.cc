// The bench JSON document read back (for --resume): a round trip gives the same document and
// the same rows; what is not a bench document, or a broken one, is refused saying why; the
// file is written whole and read back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

using ::testing::HasSubstr;

// Every kind of field set: knobs (out of name order), an input path, window options, extra
// arguments, a skipped row, a NaN loss, a loss scale, a resumed attempt.
BenchResult full_result() {
  BenchResult r;
  r.planned = 4;
  r.interrupted = true;
  r.complete = false;
  r.started_unix_s = 1795000000.25;
  r.wall_seconds = 301.5;
  r.earlier_wall_seconds = 120.5;
  r.resumed_rows = 1;
  r.guard_enabled = true;
  r.guard_seed = 7;
  r.torch_bin = "/opt/gpuscope-torch";
  r.gpu_index = 1;
  r.gpu_name = "NVIDIA H100 80GB HBM3";
  r.gpu_uuid = "GPU-1";
  r.driver_version = "580.65";
  r.warnings = {"no tensor activity"};
  Row a;
  a.spec.model = "resnet50";
  a.spec.task = "train";
  a.spec.mode = "amp_fp16";
  a.spec.batch = "auto";
  a.spec.knobs = {{"graphs", "off"}, {"cudnn_benchmark", "on"}};  // knob order, not by name
  a.spec.input = {"host", 8, true, false, ""};
  a.spec.warmup = 3;
  a.spec.windows = 4;
  a.spec.steps = 5;
  a.spec.guard_steps = 60;
  a.spec.extra_args = {"--compile", "off"};
  a.batch = 256;
  a.samples_per_second = 2500.5;
  a.step_seconds_median = 0.1;
  a.step_relative_spread = 0.02;
  a.peak_allocated_bytes = 12e9;
  a.peak_reserved_bytes = 14e9;
  a.timed_seconds = 2;
  a.timed_samples = 5000;
  a.energy_j = 1400;
  a.power_avg_w = 700;
  a.energy_per_sample_j = 0.28;
  a.sm_activity = 0.9;
  a.tensor_activity = 0.6;
  a.throttle_s = 0.5;
  a.gpu_memory_peak_bytes = 20e9;
  a.short_windows = true;
  a.torch_version = "2.11.0";
  a.device_name = "NVIDIA H100 80GB HBM3";
  a.wall_seconds = 12.5;
  a.guard = GuardResult{Verdict::diverged, "ends at 0.9, fp32 at 0.3"};
  Row b;
  b.spec.model = "resnet50";
  b.spec.task = "infer";
  b.spec.mode = "fp8";
  b.spec.input = {"jpeg", 4, std::nullopt, std::nullopt, "/data/imagenet"};
  b.skipped = true;
  b.skip_code = "not_supported";
  b.skip_reason = "fp8 needs compute capability 8.9";
  b.wall_seconds = 1;
  Row c;  // a data-parallel row's twin without gradient sync
  c.spec.model = "vit_b16";
  c.spec.task = "train";
  c.spec.mode = "amp_bf16";
  c.spec.gpus = 2;
  c.spec.grad_sync = false;
  c.samples_per_second = 6100;
  c.world_size = 2;
  c.peak_reserved_per_gpu_bytes = 13e9;
  c.slowest_rank_samples_per_second = 3040.5;
  c.all_reduce = "nccl";
  c.all_reduce_fallback = "rank 1 is on another host (node2)";
  c.optimizer_sharded = false;
  c.wall_seconds = 30;
  r.rows = {a, b, c};
  r.guards = {{"resnet50", "fp32", LossCurve{{2.3, 1.0, 0.3}, {}, {}}, {Verdict::ok, "2.3 -> 0.3"}},
              {"resnet50",
               "amp_fp16",
               LossCurve{{2.3, std::nan(""), 0.9}, 65536.0, 2},
               {Verdict::nan, "not finite"}},
              {"resnet50", "bf16", std::nullopt, {Verdict::unknown, "no --task guard"}}};
  r.answers = compute_answers(r.rows);
  return r;
}

TEST(BenchJsonRead, RoundTripGivesTheSameDocumentAndRows) {
  const BenchResult original = full_result();
  const nlohmann::json written = bench_to_json(original);
  auto read = bench_from_json(written);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(bench_to_json(*read), written);
  // The fields that the document shows only through derived text.
  ASSERT_EQ(read->rows.size(), 3u);
  EXPECT_EQ(read->rows[2].spec.gpus, 2);
  EXPECT_FALSE(read->rows[2].spec.grad_sync);
  EXPECT_EQ(read->rows[2].spec.label(), "vit_b16 train amp_bf16 gpus=2 grad-sync=off");
  EXPECT_EQ(read->rows[2].slowest_rank_samples_per_second, 3040.5);
  EXPECT_EQ(read->rows[2].world_size, 2);
  EXPECT_EQ(read->rows[2].all_reduce, "nccl");
  EXPECT_EQ(read->rows[2].all_reduce_fallback, "rank 1 is on another host (node2)");
  EXPECT_EQ(read->rows[2].optimizer_sharded, false);
  EXPECT_FALSE(read->rows[2].collective_seconds_per_step.has_value());
  const RowSpec& spec = read->rows[0].spec;
  EXPECT_EQ(spec.knobs, original.rows[0].spec.knobs);
  EXPECT_EQ(spec.input, original.rows[0].spec.input);
  EXPECT_EQ(spec.torch_args(), original.rows[0].spec.torch_args());
  EXPECT_EQ(spec.guard_steps, 60);
  EXPECT_EQ(spec.label(), original.rows[0].spec.label());
  EXPECT_EQ(read->rows[1].spec.input.data_dir, "/data/imagenet");
  EXPECT_TRUE(read->rows[1].skipped);
  EXPECT_EQ(read->rows[0].guard->verdict, Verdict::diverged);
  EXPECT_FALSE(read->complete);
  EXPECT_EQ(read->resumed_rows, 1u);
  EXPECT_EQ(read->gpu_index, 1u);
  EXPECT_EQ(read->guard_seed, 7);
  ASSERT_EQ(read->guards.size(), 3u);
  EXPECT_TRUE(std::isnan(read->guards[1].curve->losses[1]));
  EXPECT_EQ(read->guards[1].curve->loss_scale, 65536.0);
  EXPECT_EQ(read->guards[1].curve->skipped_steps, 2);
  EXPECT_FALSE(read->guards[2].curve.has_value());
  EXPECT_EQ(read->guards[2].result.reason, "no --task guard");
}

TEST(BenchJsonRead, NewFieldsAreWritten) {
  const nlohmann::json j = bench_to_json(full_result());
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["resumed_rows"], 1);
  EXPECT_EQ(j["earlier_wall_seconds"], 120.5);
  EXPECT_EQ(j["gpu_index"], 1);
  EXPECT_EQ(j["guard_enabled"], true);
  EXPECT_EQ(j["rows"][0]["windows"], 4);
  EXPECT_EQ(j["rows"][0]["extra_args"][1], "off");
  EXPECT_EQ(bench_to_json(BenchResult{})["complete"], true);
}

TEST(BenchJsonRead, OlderDocumentsWithoutTheNewFieldsRead) {
  nlohmann::json j = bench_to_json(full_result());
  for (const char* key : {"complete", "resumed_rows", "earlier_wall_seconds", "gpu_index",
                          "guard_enabled", "guard_seed"}) {
    j.erase(key);
  }
  for (auto& row : j["rows"]) {
    for (const char* key : {"warmup", "windows", "steps", "guard_steps", "extra_args", "gpus",
                            "grad_sync", "data_parallel"}) {
      row.erase(key);
    }
  }
  auto read = bench_from_json(j);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_TRUE(read->complete);  // written at its end
  EXPECT_EQ(read->gpu_index, 0u);
  EXPECT_FALSE(read->rows[0].spec.windows.has_value());
  EXPECT_EQ(read->rows[2].spec.gpus, 1);
  EXPECT_TRUE(read->rows[2].spec.grad_sync);
}

Status error_of(const nlohmann::json& j) {
  auto read = bench_from_json(j);
  return read.ok() ? Status() : read.status();
}

TEST(BenchJsonRead, WhatIsNotABenchDocumentIsRefusedSayingWhy) {
  const nlohmann::json good = bench_to_json(full_result());
  Status other = error_of(nlohmann::json{{"kind", "gpuscope.burn"}, {"rows", nlohmann::json()}});
  EXPECT_EQ(other.code(), Code::data_error);
  EXPECT_THAT(other.message(), HasSubstr("not a gpuscope bench document"));
  EXPECT_EQ(error_of(nlohmann::json::array()).code(), Code::data_error);

  nlohmann::json newer = good;
  newer["schema_version"] = kBenchSchemaVersion + 1;
  EXPECT_THAT(error_of(newer).message(), HasSubstr("newer"));

  nlohmann::json no_rows = good;
  no_rows.erase("rows");
  EXPECT_THAT(error_of(no_rows).message(), HasSubstr("rows: missing"));

  nlohmann::json bad_mode = good;
  bad_mode["rows"][1]["mode"] = 16;
  EXPECT_THAT(error_of(bad_mode).message(), HasSubstr("rows[1].mode: expected a string"));

  nlohmann::json bad_verdict = good;
  bad_verdict["guard"][0]["verdict"] = "great";
  EXPECT_THAT(error_of(bad_verdict).message(), HasSubstr("guard[0].verdict: unknown verdict"));

  nlohmann::json bad_status = good;
  bad_status["rows"][0]["status"] = "maybe";
  EXPECT_THAT(error_of(bad_status).message(), HasSubstr("rows[0].status"));

  nlohmann::json bad_knob = good;
  bad_knob["rows"][0]["knobs"]["turbo"] = "on";
  EXPECT_THAT(error_of(bad_knob).message(), HasSubstr("unknown knob 'turbo'"));

  nlohmann::json no_gpus = good;
  no_gpus["rows"][2]["gpus"] = 0;
  EXPECT_THAT(error_of(no_gpus).message(), HasSubstr("rows[2].gpus: expected at least 1"));

  nlohmann::json bad_rate = good;
  bad_rate["rows"][2]["data_parallel"]["slowest_rank_samples_per_second"] = "fast";
  EXPECT_THAT(error_of(bad_rate).message(),
              HasSubstr("rows[2].data_parallel.slowest_rank_samples_per_second"));

  nlohmann::json too_many = good;
  too_many["rows_planned"] = 1;
  EXPECT_THAT(error_of(too_many).message(), HasSubstr("3 rows but rows_planned is 1"));

  const std::pair<const char*, const char*> objects[] = {
      {"/rows/0", "rows[0]"},
      {"/rows/0/knobs", "rows[0].knobs"},
      {"/rows/1/input", "rows[1].input"},
      {"/rows/0/guard", "rows[0].guard"},
      {"/guard/1", "guard[1]"},
      {"/guard/1/curve", "guard[1].curve"},
      {"/rows/2/data_parallel", "rows[2].data_parallel"},
      {"/gpu", "gpu"}};
  for (const auto& [place, where] : objects) {
    nlohmann::json not_object = good;
    const nlohmann::json::json_pointer pointer(place);
    ASSERT_TRUE(not_object.contains(pointer)) << place;
    not_object[pointer] = 3;
    EXPECT_THAT(error_of(not_object).message(),
                HasSubstr(std::string(where) + ": expected an object"));
  }
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/bench_json_read_" + std::to_string(getpid()) + "_" + name;
}

TEST(BenchJsonFile, SavedWholeAndLoadedBack) {
  const std::string path = temp_path("saved.json");
  std::ofstream(path) << "an older, longer file that the new one replaces entirely";
  const nlohmann::json doc = bench_to_json(full_result());
  ASSERT_TRUE(save_bench_json(path, doc).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));  // renamed over the file
  auto loaded = load_bench_json(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(bench_to_json(*loaded), doc);

  Status unwritable = save_bench_json("/nonexistent-dir/bench.json", doc);
  EXPECT_EQ(unwritable.code(), Code::io_error);
  EXPECT_THAT(unwritable.message(), HasSubstr("cannot write /nonexistent-dir/bench.json"));
}

TEST(BenchJsonFile, MissingTruncatedAndForeignFilesAreClearErrors) {
  auto missing = load_bench_json(temp_path("missing.json"));
  EXPECT_EQ(missing.code(), Code::not_found);
  EXPECT_THAT(missing.status().message(), HasSubstr("no such file"));

  const std::string truncated = temp_path("truncated.json");
  std::ofstream(truncated) << bench_to_json(full_result()).dump(2).substr(0, 300);
  auto cut = load_bench_json(truncated);
  EXPECT_EQ(cut.code(), Code::data_error);
  EXPECT_THAT(cut.status().message(), HasSubstr(truncated + ": not JSON"));

  const std::string foreign = temp_path("foreign.json");
  std::ofstream(foreign) << R"({"kind": "gpuscope.info", "gpus": []})";
  auto info = load_bench_json(foreign);
  EXPECT_EQ(info.code(), Code::data_error);
  EXPECT_THAT(info.status().message(), HasSubstr(foreign + ": not a gpuscope bench document"));
}

}  // namespace
}  // namespace gpuscope::bench
